//! QuickJS (rquickjs) against Boa for cosmoql's server-side JavaScript (issue 26): what an
//! invocation costs to start, how fast a script calls the host (a loop of document creates), and
//! whether each engine stops an infinite loop, a deep recursion and an allocation bomb within its
//! limits and stays usable after. Prints one JSON line a measurement.

use std::time::{Duration, Instant};

/// The script of a loop of document operations: `n` creates through a host function, each with
/// its document as JSON text (what `createDocument` hands the store).
#[allow(dead_code)]
fn creates(n: usize) -> String {
    format!(
        "let made = 0; for (let i = 0; i < {n}; i++) {{ \
           made += __create(JSON.stringify({{ id: 'item-' + i, deviceId: 'dev-' + (i % 23), n: i, tags: ['a', 'b'] }})); \
         }} made"
    )
}

const INFINITE: &str = "while (true) {}";
const RECURSION: &str = "function f(n) { return f(n + 1) + 1; } f(0)";
#[allow(dead_code)]
const BOMB: &str = "let s = 'xxxxxxxxxxxxxxxx'; while (true) { s = s + s; }";
#[allow(dead_code)]
const ARRAYS: &str = "let a = []; while (true) { a.push(new Array(10000).fill(1.5)); }";

#[allow(dead_code)]
fn line(engine: &str, what: &str, value: String) {
    println!("{{\"engine\":\"{engine}\",\"measure\":\"{what}\",{value}}}");
}

/// The line of a hostile script: how long it ran, whether it was stopped and why, and what the
/// next call gave.
#[allow(dead_code)]
fn stopped_line(engine: &str, what: &str, ms: f64, out: Result<String, String>, after: Result<String, String>) {
    let value = format!(
        "\"ms\":{ms:.1},\"stopped\":{},\"message\":{:?},\"next call\":{:?}",
        out.is_err(),
        out.err().unwrap_or_default(),
        after
    );
    line(engine, what, value);
}

#[allow(dead_code)]
fn per_call(n: usize, mut f: impl FnMut()) -> f64 {
    f();
    let started = Instant::now();
    for _ in 0..n {
        f();
    }
    started.elapsed().as_secs_f64() * 1e6 / n as f64
}

#[cfg(feature = "quickjs")]
mod quickjs {
    use super::*;
    use rquickjs::{Context, Function, Runtime};

    fn runtime(limit: Option<Duration>) -> Runtime {
        let rt = Runtime::new().unwrap();
        rt.set_memory_limit(64 << 20);
        rt.set_max_stack_size(256 << 10);
        if let Some(limit) = limit {
            let deadline = Instant::now() + limit;
            rt.set_interrupt_handler(Some(Box::new(move || Instant::now() > deadline)));
        }
        rt
    }

    fn eval(rt: &Runtime, src: &str) -> Result<String, String> {
        let ctx = Context::full(rt).unwrap();
        ctx.with(|ctx| {
            let created = Function::new(ctx.clone(), |doc: String| -> i32 { i32::from(!doc.is_empty()) }).unwrap();
            ctx.globals().set("__create", created).unwrap();
            match ctx.eval::<rquickjs::Value, _>(src) {
                Ok(v) => Ok(format!("{v:?}").chars().take(40).collect()),
                Err(e) => {
                    let caught = ctx.catch();
                    Err(format!("{e}: {:?}", caught).chars().take(120).collect())
                }
            }
        })
    }

    pub fn run() {
        let e = "quickjs";
        let us = per_call(2000, || {
            let rt = runtime(None);
            eval(&rt, "1 + 1").unwrap();
        });
        line(e, "invocation, new runtime and context (us)", format!("\"value\":{us:.1}"));
        let rt = runtime(None);
        let us = per_call(2000, || {
            eval(&rt, "1 + 1").unwrap();
        });
        line(e, "invocation, new context on a kept runtime (us)", format!("\"value\":{us:.1}"));
        let script = creates(100_000);
        let started = Instant::now();
        eval(&rt, &script).unwrap();
        let per_s = 100_000.0 / started.elapsed().as_secs_f64();
        line(e, "host calls with a JSON document (per s)", format!("\"value\":{per_s:.0}"));
        for (what, src) in
            [("infinite loop", INFINITE), ("recursion", RECURSION), ("string bomb", BOMB), ("array bomb", ARRAYS)]
        {
            let rt = runtime(Some(Duration::from_millis(100)));
            let started = Instant::now();
            let out = eval(&rt, src);
            let ms = started.elapsed().as_secs_f64() * 1e3;
            let after = eval(&runtime(None), "40 + 2");
            stopped_line(e, what, ms, out, after);
        }
    }
}

#[cfg(feature = "boa")]
mod boa {
    use super::*;
    use boa_engine::{js_string, Context, JsResult, JsValue, NativeFunction, Source};

    fn create(_: &JsValue, args: &[JsValue], _: &mut Context) -> JsResult<JsValue> {
        let empty = args.first().and_then(JsValue::as_string).is_none_or(|s| s.is_empty());
        Ok(JsValue::from(i32::from(!empty)))
    }

    fn eval(src: &str, limits: bool) -> Result<String, String> {
        let mut ctx = Context::default();
        if limits {
            // Boa bounds loop iterations and recursion, not time or memory.
            ctx.runtime_limits_mut().set_loop_iteration_limit(10_000_000);
            ctx.runtime_limits_mut().set_recursion_limit(10_000);
        }
        ctx.register_global_builtin_callable(js_string!("__create"), 1, NativeFunction::from_fn_ptr(create)).unwrap();
        match ctx.eval(Source::from_bytes(src)) {
            Ok(v) => Ok(v.display().to_string().chars().take(40).collect()),
            Err(e) => Err(e.to_string().chars().take(120).collect()),
        }
    }

    pub fn run() {
        let e = "boa";
        let us = per_call(2000, || {
            eval("1 + 1", false).unwrap();
        });
        line(e, "invocation, new context (us)", format!("\"value\":{us:.1}"));
        let script = creates(100_000);
        let started = Instant::now();
        eval(&script, false).unwrap();
        let per_s = 100_000.0 / started.elapsed().as_secs_f64();
        line(e, "host calls with a JSON document (per s)", format!("\"value\":{per_s:.0}"));
        // No memory limit: the allocation bombs would take the process down, so they are not run.
        for (what, src) in [("infinite loop", INFINITE), ("recursion", RECURSION)] {
            let started = Instant::now();
            let out = eval(src, true);
            let ms = started.elapsed().as_secs_f64() * 1e3;
            let after = eval("40 + 2", true);
            stopped_line(e, what, ms, out, after);
        }
        line(e, "string and array bombs", "\"stopped\":false,\"message\":\"not run: Boa has no memory limit\"".into());
    }
}

fn main() {
    #[cfg(feature = "quickjs")]
    quickjs::run();
    #[cfg(feature = "boa")]
    boa::run();
}
