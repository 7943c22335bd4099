//! Server-side JavaScript (issue 26): the sandbox the service's scripts run in. QuickJS (through
//! rquickjs, chosen by measurement: `docs/ARCHITECTURE.md`, "Server-side JavaScript: the engine")
//! with only the language's own objects: no file system, network, timers, modules or host
//! objects. Every invocation runs under the service's limits:
//!
//! * **time**: 5 seconds by default (the service's bound on a script's execution), checked by
//!   QuickJS's interrupt handler, so a loop that never ends stops at the limit;
//! * **memory**: the runtime's allocations, past which QuickJS throws "out of memory";
//! * **stack**: deep recursion ends with "Maximum call stack size exceeded".
//!
//! A script that hits a limit or throws ends its invocation with a [`ScriptError`]; the sandbox
//! stays usable (each invocation has a context of its own on the sandbox's runtime).
//!
//! Values cross the boundary as JSON, as the service's do: arguments are parsed into JavaScript
//! values, a result is stringified back (`undefined` stays undefined).

mod script;

pub use script::{Host, HostError, Invocation, Outcome, Reply, RequestBody};

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;
use std::time::{Duration, Instant};

use cosmoql_value::{parse_json, to_json_string, Value};
use rquickjs::function::Args;
use rquickjs::{Context, Ctx, Function, Runtime};

/// The bounds of one invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// How long one invocation may run (the service's 5 s).
    pub time: Duration,
    /// The bytes the sandbox's JavaScript heap may hold.
    pub memory: usize,
    /// The bytes of native stack the JavaScript may use (deep recursion past it throws).
    pub stack: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { time: Duration::from_secs(5), memory: 64 << 20, stack: 512 << 10 }
    }
}

/// Why a script ended without a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScriptErrorKind {
    /// The script's text is not JavaScript, or not what was expected of it (a function).
    Syntax,
    /// The script threw (its message is the thrown value's).
    Thrown,
    /// It ran past [`Limits::time`].
    TimeLimit,
    /// It allocated past [`Limits::memory`].
    MemoryLimit,
    /// It recursed past [`Limits::stack`].
    StackLimit,
    /// Its result has no JSON form (a function, a symbol, a cycle).
    Result,
    /// The engine failed otherwise (a bug, or the host out of memory).
    Engine,
}

/// A script that ended without a result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub kind: ScriptErrorKind,
    /// What the script threw as JavaScript's `String(e)` gives it (`Error: no input` for an
    /// `Error`, the text of a thrown string), or the limit it ran past.
    pub message: String,
    /// The `number` of a thrown `Error(number, message)` (the service's substatus for it).
    pub number: Option<u32>,
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScriptError {}

impl ScriptError {
    pub fn new(kind: ScriptErrorKind, message: impl Into<String>) -> ScriptError {
        error(kind, message)
    }
}

fn error(kind: ScriptErrorKind, message: impl Into<String>) -> ScriptError {
    ScriptError { kind, message: message.into(), number: None }
}

/// The function `source` defines: a declaration in parentheses is an expression whose value is
/// the function. The documentation's own bodies may end with `;` (`function (input, pattern) {
/// ... };`), which is dropped first.
fn function_of<'js>(ctx: &Ctx<'js>, source: &str) -> Result<Function<'js>, ScriptError> {
    let source = source.trim_end().trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    match ctx.eval::<rquickjs::Value, _>(format!("(\n{source}\n)")) {
        Ok(value) => value.into_function().ok_or_else(|| {
            error(
                ScriptErrorKind::Syntax,
                "the script's value is not a function (a script's body is `function name(...) { ... }`)",
            )
        }),
        Err(e) => Err(caught(ctx, e)),
    }
}

/// A JavaScript runtime under [`Limits`]: one a thread (QuickJS runtimes are not shared between
/// threads), reused across invocations.
pub struct Sandbox {
    /// The context of the current session of calls ([`Sandbox::call_in_session`]); declared
    /// first, so it goes before the runtime it lives in.
    session: RefCell<Option<Session>>,
    runtime: Runtime,
    limits: Limits,
    /// When the running invocation must stop (read by the interrupt handler).
    deadline: Rc<Cell<Option<Instant>>>,
}

impl fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sandbox").field("limits", &self.limits).finish_non_exhaustive()
    }
}

impl Sandbox {
    pub fn new(limits: Limits) -> Result<Sandbox, ScriptError> {
        let runtime = Runtime::new().map_err(|e| error(ScriptErrorKind::Engine, e.to_string()))?;
        runtime.set_memory_limit(limits.memory);
        runtime.set_max_stack_size(limits.stack);
        let deadline: Rc<Cell<Option<Instant>>> = Rc::new(Cell::new(None));
        let watched = Rc::clone(&deadline);
        runtime.set_interrupt_handler(Some(Box::new(move || watched.get().is_some_and(|at| Instant::now() >= at))));
        Ok(Sandbox { session: RefCell::new(None), runtime, limits, deadline })
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Calls the function `source` defines (a user-defined function's body: `function tax(income)
    /// { ... }`, or any expression whose value is a function) with `args`; its result.
    pub fn call_function(&self, source: &str, args: &[Value]) -> Result<Value, ScriptError> {
        self.invoke(|ctx| {
            let function = function_of(&ctx, source)?;
            let call = arguments(&ctx, args)?;
            let result: rquickjs::Value = function.call_arg(call).map_err(|e| caught(&ctx, e))?;
            value_of(&ctx, result)
        })
    }

    /// Calls the function `source` defines, as [`Sandbox::call_function`] does, in a context kept
    /// for the calls of `session` (one query's UDF calls): the function is compiled once and
    /// called for each row, without a new context each time. A new session, or a call that
    /// fails, drops the context.
    pub fn call_in_session(&self, session: u64, source: &str, args: &[Value]) -> Result<Value, ScriptError> {
        let mut slot =
            self.session.try_borrow_mut().map_err(|_| error(ScriptErrorKind::Engine, "a call within a call"))?;
        if slot.as_ref().map(|s| s.id) != Some(session) {
            *slot = None;
            let context = Context::full(&self.runtime).map_err(|e| error(ScriptErrorKind::Engine, e.to_string()))?;
            *slot = Some(Session { id: session, context, functions: HashMap::new() });
        }
        let Some(Session { context, functions, .. }) = slot.as_mut() else {
            return Err(error(ScriptErrorKind::Engine, "no session"));
        };
        let deadline = Instant::now() + self.limits.time;
        self.deadline.set(Some(deadline));
        let out = context.with(|ctx| {
            let js = |e| caught(&ctx, e);
            let name = match functions.get(source) {
                Some(name) => name.clone(),
                None => {
                    let function = function_of(&ctx, source)?;
                    let name = format!("__cosmoqlUdf{}", functions.len());
                    ctx.globals().set(name.as_str(), function).map_err(js)?;
                    functions.insert(source.to_string(), name.clone());
                    name
                }
            };
            let function: Function = ctx.globals().get(name.as_str()).map_err(js)?;
            let call = arguments(&ctx, args)?;
            let result: rquickjs::Value = function.call_arg(call).map_err(js)?;
            value_of(&ctx, result)
        });
        let late = Instant::now() >= deadline;
        self.deadline.set(None);
        if out.is_err() {
            *slot = None;
            self.runtime.run_gc();
        }
        out.map_err(|e| self.past_limit(e, late))
    }

    /// QuickJS's own "interrupted" (which scripts cannot catch), past the deadline: the time
    /// limit, not a script's error of that text thrown in time.
    fn past_limit(&self, e: ScriptError, late: bool) -> ScriptError {
        // `String(e)` of QuickJS's `InternalError` (or its bare message).
        let interrupted = matches!(e.message.as_str(), "InternalError: interrupted" | "interrupted");
        if e.kind == ScriptErrorKind::Thrown && interrupted && late {
            return error(
                ScriptErrorKind::TimeLimit,
                format!("the script ran past its time limit of {:?}", self.limits.time),
            );
        }
        e
    }

    /// Runs `work` in a context of its own, under the time limit.
    fn invoke<T>(&self, work: impl FnOnce(Ctx<'_>) -> Result<T, ScriptError>) -> Result<T, ScriptError> {
        let context = Context::full(&self.runtime).map_err(|e| error(ScriptErrorKind::Engine, e.to_string()))?;
        let deadline = Instant::now() + self.limits.time;
        self.deadline.set(Some(deadline));
        let out = context.with(work);
        let late = Instant::now() >= deadline;
        self.deadline.set(None);
        drop(context);
        // What the invocation allocated goes now, not at some later invocation's expense.
        self.runtime.run_gc();
        out.map_err(|e| self.past_limit(e, late))
    }
}

/// The calls of one session ([`Sandbox::call_in_session`]): a context, and the global name of
/// each function compiled in it, by source.
struct Session {
    id: u64,
    context: Context,
    functions: HashMap<String, String>,
}

/// `args` as a JavaScript call's arguments (through JSON; undefined stays undefined).
fn arguments<'js>(ctx: &Ctx<'js>, args: &[Value]) -> Result<Args<'js>, ScriptError> {
    let mut call = Args::new(ctx.clone(), args.len());
    for arg in args {
        let value = match arg {
            Value::Undefined => rquickjs::Value::new_undefined(ctx.clone()),
            v => {
                let text = to_json_string(v)
                    .ok_or_else(|| error(ScriptErrorKind::Engine, "an argument without a JSON form"))?;
                ctx.json_parse(text).map_err(|e| caught(ctx, e))?
            }
        };
        call.push_arg(value).map_err(|e| caught(ctx, e))?;
    }
    Ok(call)
}

/// A JavaScript result as a value: through `JSON.stringify`, as the service returns it.
fn value_of<'js>(ctx: &Ctx<'js>, value: rquickjs::Value<'js>) -> Result<Value, ScriptError> {
    if value.is_undefined() {
        return Ok(Value::Undefined);
    }
    if value.is_function() || value.is_symbol() {
        return Err(error(ScriptErrorKind::Result, "the script's result has no JSON form"));
    }
    let text = match ctx.json_stringify(value) {
        Ok(Some(text)) => text.to_string().map_err(|e| error(ScriptErrorKind::Engine, e.to_string()))?,
        Ok(None) => return Ok(Value::Undefined),
        Err(e) => {
            let e = caught(ctx, e);
            return Err(if e.kind == ScriptErrorKind::Thrown { error(ScriptErrorKind::Result, e.message) } else { e });
        }
    };
    parse_json(&text).map_err(|e| error(ScriptErrorKind::Result, e.to_string()))
}

/// The error an engine call ended with: the pending exception when it threw.
fn caught(ctx: &Ctx<'_>, e: rquickjs::Error) -> ScriptError {
    match e {
        rquickjs::Error::Exception => {
            let thrown = ctx.catch();
            let message = match (thrown.as_exception(), thrown.as_string()) {
                (Some(exception), _) => exception.message().unwrap_or_default(),
                (None, Some(text)) => text.to_string().unwrap_or_default(),
                (None, None) => ctx
                    .json_stringify(thrown.clone())
                    .ok()
                    .flatten()
                    .and_then(|s| s.to_string().ok())
                    .unwrap_or_else(|| "a value without a JSON form".into()),
            };
            let name = thrown.as_exception().and_then(|x| x.get::<_, String>("name").ok()).unwrap_or_default();
            let number = thrown
                .as_object()
                .and_then(|x| x.get::<_, Option<f64>>("number").ok().flatten())
                .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX))
                .map(|n| n as u32);
            let kind = match (name.as_str(), message.as_str()) {
                ("SyntaxError", _) => ScriptErrorKind::Syntax,
                (_, "out of memory") => ScriptErrorKind::MemoryLimit,
                (_, "Maximum call stack size exceeded") => ScriptErrorKind::StackLimit,
                _ => ScriptErrorKind::Thrown,
            };
            let message = match kind {
                ScriptErrorKind::MemoryLimit => "the script ran past its memory limit (out of memory)".to_string(),
                ScriptErrorKind::StackLimit => {
                    "the script ran past its stack limit (Maximum call stack size exceeded)".to_string()
                }
                ScriptErrorKind::Syntax => format!("the script is not valid JavaScript: {message}"),
                // `String(e)`, as the service quotes what a script threw.
                _ if !name.is_empty() => format!("{name}: {message}"),
                _ => message,
            };
            ScriptError { kind, message, number }
        }
        rquickjs::Error::Allocation => error(ScriptErrorKind::MemoryLimit, "the script ran past its memory limit"),
        other => error(ScriptErrorKind::Engine, other.to_string()),
    }
}
