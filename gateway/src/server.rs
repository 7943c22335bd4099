//! The HTTP server: HTTP/1.1 and HTTP/2 on one port (HTTP/2 with prior knowledge over plain
//! http included: hyper-util's automatic connection reads the client's preface), every request
//! bounded before it reaches a handler and authorized by its signature; https with `--tls`
//! (`crate::tls`), both protocols offered by ALPN.
//!
//! Bounds on what a client can hold (a hostile network must not exhaust the server): a limit on
//! open connections (the next waits in the kernel's backlog), a time to send the headers and one
//! to send the body, a header size, and a body size checked against `content-length` before
//! anything is read and again while reading. Handlers run on the blocking pool (the embedded
//! engine is synchronous), so a long query never stalls the connections. Shutdown stops
//! accepting, lets requests in flight finish (their writes are acknowledged only once durable),
//! and ends after a grace period.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::http::{HeaderValue, Response};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::auth::{Keys, SignedRequest};
use crate::errors;
use crate::resources::{Gateway, RangeMode, RetiredRanges};
use crate::routes;
use crate::tls::Tls;
use crate::wire::{Reply, Request};

/// How the server listens and what it bounds.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The address to listen on (loopback by default; port 0 picks a free one).
    pub bind: SocketAddr,
    /// The account keys requests are signed with.
    pub keys: Keys,
    /// Connections open at once; more wait to be accepted.
    pub max_connections: usize,
    /// Time a client has to send a request's headers.
    pub header_timeout: Duration,
    /// Time a client has to send a request's body.
    pub body_timeout: Duration,
    /// The largest request body (the service refuses requests over 2 MB of document; a
    /// transactional batch may carry a little more).
    pub max_body_bytes: usize,
    /// Time requests in flight get to finish at shutdown.
    pub grace: Duration,
    /// How containers' partition key ranges are listed.
    pub ranges: RangeMode,
    /// https with this certificate; `None`: plain http.
    pub tls: Option<Tls>,
    /// How a range retired by a split answers.
    pub retired: RetiredRanges,
}

impl ServerConfig {
    /// `https` or `http`.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 8081)),
            keys: Keys::emulator(),
            max_connections: 1024,
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(60),
            max_body_bytes: 4 * 1024 * 1024,
            grace: Duration::from_secs(30),
            ranges: RangeMode::Physical,
            tls: None,
            retired: RetiredRanges::Transparent,
        }
    }
}

/// A bound server, not yet serving.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    gateway: Arc<Gateway>,
    config: Arc<ServerConfig>,
}

impl Server {
    /// Binds `config.bind` for `gateway`.
    pub async fn bind(gateway: Gateway, config: ServerConfig) -> std::io::Result<Server> {
        let listener = TcpListener::bind(config.bind).await?;
        Ok(Server { listener, gateway: Arc::new(gateway), config: Arc::new(config) })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` completes, then lets the requests in flight finish (up to the
    /// grace period).
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let connections = Arc::new(Semaphore::new(self.config.max_connections.max(1)));
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        tokio::pin!(shutdown);
        loop {
            let permit = tokio::select! {
                permit = Arc::clone(&connections).acquire_owned() => match permit {
                    Ok(permit) => permit,
                    Err(_) => break,
                },
                () = &mut shutdown => break,
            };
            let (stream, _) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    // Out of descriptors, a connection reset before it was accepted: go on.
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                () = &mut shutdown => break,
            };
            let _ = stream.set_nodelay(true);
            let gateway = Arc::clone(&self.gateway);
            let config = Arc::clone(&self.config);
            let watcher = graceful.watcher();
            tokio::spawn(async move {
                match config.tls.clone() {
                    None => serve_connection(stream, gateway, config, watcher).await,
                    // The handshake is bounded as the headers are: a client that opens a
                    // connection and says nothing holds it no longer.
                    Some(tls) => {
                        if let Ok(Ok(stream)) =
                            tokio::time::timeout(config.header_timeout, tls.acceptor().accept(stream)).await
                        {
                            serve_connection(stream, gateway, config, watcher).await;
                        }
                    }
                }
                drop(permit);
            });
        }
        let _ = tokio::time::timeout(self.config.grace, graceful.shutdown()).await;
    }
}

/// Serves one connection (HTTP/1.1 or HTTP/2, whichever the client speaks) until it closes or
/// the server shuts down.
async fn serve_connection<IO>(
    io: IO,
    gateway: Arc<Gateway>,
    config: Arc<ServerConfig>,
    watcher: hyper_util::server::graceful::Watcher,
) where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(config.header_timeout).max_buf_size(64 * 1024);
    builder.http2().timer(TokioTimer::new()).max_header_list_size(64 * 1024).max_concurrent_streams(128);
    let service = service_fn(move |request| {
        let gateway = Arc::clone(&gateway);
        let config = Arc::clone(&config);
        async move { Ok::<_, Infallible>(handle(gateway, config, request).await) }
    });
    let connection = builder.serve_connection(TokioIo::new(io), service).into_owned();
    let _ = watcher.watch(connection).await;
}

/// Serves `client` until Ctrl-C or SIGTERM (then lets requests in flight finish): what `cosmoql
/// serve` runs. `ready` is told the address once the server listens.
pub fn serve_until_signal(
    client: cosmoql::CosmosClient,
    config: ServerConfig,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let server = Server::bind(Gateway::new(client, config.ranges, config.retired), config).await?;
        ready(server.local_addr()?);
        server.run(stop_signal()).await;
        Ok(())
    })
}

/// Completes at Ctrl-C or SIGTERM.
async fn stop_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}

/// A server on a runtime of its own, on its own thread (tests and programs that embed it).
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    scheme: &'static str,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RunningServer {
    /// Starts a server for `client`; returns once it listens.
    pub fn start(client: cosmoql::CosmosClient, config: ServerConfig) -> std::io::Result<RunningServer> {
        let scheme = config.scheme();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (bound, listening) = std::sync::mpsc::channel::<std::io::Result<SocketAddr>>();
        // The runtime is built and driven on the server's own thread, so a caller inside a
        // runtime of its own (an async test) may start one.
        let thread = std::thread::Builder::new().name("cosmoql-serve".into()).spawn(move || {
            let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = bound.send(Err(e));
                    return;
                }
            };
            runtime.block_on(async {
                let server = match Server::bind(Gateway::new(client, config.ranges, config.retired), config).await {
                    Ok(server) => server,
                    Err(e) => {
                        let _ = bound.send(Err(e));
                        return;
                    }
                };
                let _ = bound.send(server.local_addr());
                server
                    .run(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        })?;
        let addr =
            listening.recv().map_err(|_| std::io::Error::other("the server's thread ended before it listened"))??;
        Ok(RunningServer { addr, scheme, stop: Some(stop), thread: Some(thread) })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL (`http://127.0.0.1:PORT/`, or `https://` with TLS).
    pub fn endpoint(&self) -> String {
        format!("{}://{}/", self.scheme, self.addr)
    }

    /// Stops it and waits for the requests in flight.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Answers one request: bounds, authorization, then the route on the blocking pool.
async fn handle(
    gateway: Arc<Gateway>,
    config: Arc<ServerConfig>,
    request: hyper::Request<Incoming>,
) -> Response<Full<Bytes>> {
    let activity_id = request
        .headers()
        .get("x-ms-activity-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| v.len() <= 64)
        .map_or_else(new_activity_id, str::to_string);
    let reply = match read(&config, request, &activity_id).await {
        Ok(request) => {
            let gateway = Arc::clone(&gateway);
            match tokio::task::spawn_blocking(move || routes::dispatch(&gateway, &request)).await {
                Ok(reply) => reply,
                Err(_) => Reply::error(errors::refusal(
                    500,
                    0,
                    "Internal error (a bug in cosmoql): the request's handler failed.",
                    &activity_id,
                )),
            }
        }
        Err(reply) => reply,
    };
    respond(reply, &activity_id)
}

/// The request, read and authorized; or the refusal.
async fn read(config: &ServerConfig, request: hyper::Request<Incoming>, activity_id: &str) -> Result<Request, Reply> {
    let refuse = |status: u16, message: &str| Reply::error(errors::refusal(status, 0, message, activity_id));
    let (parts, body) = request.into_parts();
    let Some(segments) = routes::segments(parts.uri.path()) else {
        return Err(refuse(400, "The request path is not valid (too long, or not UTF-8 once decoded)."));
    };
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let declared = header("content-length").and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > config.max_body_bytes as u64) {
        return Err(refuse(413, "Request size is too large."));
    }
    let is_query = routes::is_query(&parts.method, header("content-type"), |name| {
        header(name).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    });
    let path = format!("/{}", segments.join("/"));
    let signed = SignedRequest {
        verb: parts.method.as_str(),
        path: &path,
        authorization: header("authorization"),
        date: header("x-ms-date").or_else(|| header("date")),
        query: is_query,
    };
    if let Err(e) = config.keys.authorize(&signed, SystemTime::now()) {
        return Err(Reply::error(errors::from_auth(&e, activity_id)));
    }
    let body =
        match tokio::time::timeout(config.body_timeout, Limited::new(body, config.max_body_bytes).collect()).await {
            Ok(Ok(collected)) => collected.to_bytes(),
            Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(refuse(413, "Request size is too large."))
            }
            Ok(Err(_)) => return Err(refuse(400, "The request body could not be read.")),
            Err(_) => return Err(refuse(408, "The request body did not arrive in time.")),
        };
    let host = parts.uri.authority().map(|a| a.as_str().to_string()).or_else(|| header("host").map(str::to_string));
    let endpoint = format!("{}://{}", config.scheme(), host.unwrap_or_else(|| config.bind.to_string()));
    Ok(Request {
        method: parts.method,
        segments,
        headers: parts.headers,
        body,
        activity_id: activity_id.to_string(),
        endpoint,
    })
}

/// The HTTP response for a reply, with the headers every reply carries.
fn respond(reply: Reply, activity_id: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(reply.body));
    *response.status_mut() =
        hyper::StatusCode::from_u16(reply.status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    let mut put = |name: &'static str, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.append(name, value);
        }
    };
    put("content-type", "application/json");
    put("x-ms-activity-id", activity_id);
    put("date", &httpdate::fmt_http_date(SystemTime::now()));
    put("x-ms-gatewayversion", "version=2.14.0");
    let mut charged = false;
    for (name, value) in &reply.headers {
        charged |= *name == "x-ms-request-charge";
        put(name, value);
    }
    if !charged {
        put("x-ms-request-charge", "0");
    }
    response
}

/// A fresh activity id (a random UUID's form).
fn new_activity_id() -> String {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        bytes = nanos.to_le_bytes();
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}
