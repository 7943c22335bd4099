//! A minimal REST client for tests and benchmarks of `cosmoql serve`: HTTP/1.1 over one kept-alive
//! connection, each request signed with the master key as the SDKs sign it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::SystemTime;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use cosmoql_gateway::auth::authorization_header;

/// A response: status and body.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
}

/// One connection.
pub struct Client {
    addr: SocketAddr,
    key: Vec<u8>,
    stream: BufReader<TcpStream>,
}

impl Client {
    pub fn connect(addr: SocketAddr, key: &str) -> std::io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        Ok(Client { addr, key: STANDARD.decode(key).expect("a base64 key"), stream: BufReader::new(stream) })
    }

    /// Sends a signed request (`path` as sent; its decoded form is what is signed) and reads the
    /// response.
    pub fn call(&mut self, verb: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> std::io::Result<Response> {
        let date = httpdate::fmt_http_date(SystemTime::now());
        let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy().into_owned();
        let auth = authorization_header(&self.key, verb, &decoded, &date);
        let mut head = format!(
            "{verb} {path} HTTP/1.1\r\nhost: {}\r\nx-ms-date: {date}\r\nauthorization: {auth}\r\ncontent-length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head += &format!("{name}: {value}\r\n");
        }
        head += "\r\n";
        let stream = self.stream.get_mut();
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        self.read_response()
    }

    fn read_response(&mut self) -> std::io::Result<Response> {
        let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let mut line = String::new();
        self.stream.read_line(&mut line)?;
        let status = line.split(' ').nth(1).and_then(|s| s.parse().ok()).ok_or_else(|| bad("no status line"))?;
        let mut length = 0;
        loop {
            line.clear();
            self.stream.read_line(&mut line)?;
            let trimmed = line.trim_end();
            if trimmed.is_empty() {
                break;
            }
            if let Some((name, value)) = trimmed.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().map_err(|_| bad("a content-length that is no number"))?;
                }
            }
        }
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body)?;
        Ok(Response { status, body })
    }
}
