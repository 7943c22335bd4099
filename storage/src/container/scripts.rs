//! A container's scripts: user-defined functions, stored procedures and triggers, kept with the
//! container as the service keeps them (`id`, `body`, for a trigger its type and operation, and
//! the system properties `_rid`, `_etag` and `_ts`). Storage only keeps them: running them is
//! the facade's, through the `js` crate.
//!
//! Durability: each change logs the container's whole set of scripts (a small set: the service
//! allows 50 UDFs and 100 stored procedures a container), and a checkpoint writes it with the
//! container, so replay is "the last set logged".

use std::sync::atomic::Ordering;

use super::*;
use crate::codec::{Decoded, Reader, Writer};
use crate::durable::tag;

/// The service's limits on scripts per container (research: `docs/design/server-side-js-research.md`,
/// section 4: "Max UDFs per container: 50", stored procedures 100). No trigger limit was found;
/// the procedures' is used.
pub const MAX_USER_DEFINED_FUNCTIONS: usize = 50;
pub const MAX_STORED_PROCEDURES: usize = 100;
pub const MAX_TRIGGERS: usize = 100;

/// The largest script body kept. The service documents none; a body is a resource, so the
/// resource size limit of an item (2 MB) bounds it here.
pub const MAX_SCRIPT_BODY: usize = 2 * 1024 * 1024;

/// The longest id (the service's resource ids: 255 characters).
const MAX_SCRIPT_ID: usize = 255;

/// What a script is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScriptKind {
    UserDefinedFunction,
    StoredProcedure,
    Trigger,
}

impl ScriptKind {
    /// The name the service's messages and routes use (`udfs`, `sprocs`, `triggers`).
    pub fn noun(self) -> &'static str {
        match self {
            ScriptKind::UserDefinedFunction => "user-defined function",
            ScriptKind::StoredProcedure => "stored procedure",
            ScriptKind::Trigger => "trigger",
        }
    }

    fn code(self) -> u8 {
        match self {
            ScriptKind::UserDefinedFunction => 1,
            ScriptKind::StoredProcedure => 2,
            ScriptKind::Trigger => 3,
        }
    }

    fn from_code(code: u8) -> Option<ScriptKind> {
        Some(match code {
            1 => ScriptKind::UserDefinedFunction,
            2 => ScriptKind::StoredProcedure,
            3 => ScriptKind::Trigger,
            _ => return None,
        })
    }

    fn limit(self) -> usize {
        match self {
            ScriptKind::UserDefinedFunction => MAX_USER_DEFINED_FUNCTIONS,
            ScriptKind::StoredProcedure => MAX_STORED_PROCEDURES,
            ScriptKind::Trigger => MAX_TRIGGERS,
        }
    }
}

/// When a trigger runs: before the write (it may change the request's body) or after it (in the
/// same transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerType {
    Pre,
    Post,
}

/// The writes a trigger may be named on. The REST reference lists All, Create, Replace and
/// Delete; the SDKs add Update, and .NET Upsert (research, section 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TriggerOperation {
    All,
    Create,
    Update,
    Replace,
    Delete,
    Upsert,
}

impl TriggerType {
    /// The service's spelling (`Pre`, `Post`).
    pub fn name(self) -> &'static str {
        match self {
            TriggerType::Pre => "Pre",
            TriggerType::Post => "Post",
        }
    }

    /// Reads a type, case-insensitively as the SDKs send it (`pre`, `Pre`).
    pub fn parse(text: &str) -> Option<TriggerType> {
        [TriggerType::Pre, TriggerType::Post].into_iter().find(|t| t.name().eq_ignore_ascii_case(text))
    }
}

impl TriggerOperation {
    const ALL: [TriggerOperation; 6] = [
        TriggerOperation::All,
        TriggerOperation::Create,
        TriggerOperation::Update,
        TriggerOperation::Replace,
        TriggerOperation::Delete,
        TriggerOperation::Upsert,
    ];

    /// The service's spelling (`All`, `Create`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TriggerOperation::All => "All",
            TriggerOperation::Create => "Create",
            TriggerOperation::Update => "Update",
            TriggerOperation::Replace => "Replace",
            TriggerOperation::Delete => "Delete",
            TriggerOperation::Upsert => "Upsert",
        }
    }

    /// Reads an operation, case-insensitively.
    pub fn parse(text: &str) -> Option<TriggerOperation> {
        TriggerOperation::ALL.into_iter().find(|t| t.name().eq_ignore_ascii_case(text))
    }

    /// Whether a trigger of this operation may run on a request of `request` (`Create`,
    /// `Replace`, `Upsert` or `Delete`): `All` on any, each other on its own; `Update` on a
    /// replace (inferred: the service's own matching is not recorded, research, section 3).
    pub fn runs_on(self, request: TriggerOperation) -> bool {
        self == TriggerOperation::All
            || self == request
            || (self == TriggerOperation::Update && request == TriggerOperation::Replace)
    }
}

/// A script as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub kind: ScriptKind,
    pub id: String,
    /// The JavaScript source: one function.
    pub body: String,
    /// A trigger's type and operation (`None` for the other kinds).
    pub trigger: Option<(TriggerType, TriggerOperation)>,
    /// The system properties: a resource id unique in the container, the etag that changes at
    /// each replace, and the last write's time (Unix seconds).
    pub rid: u64,
    pub etag: u64,
    pub ts: u64,
}

impl Script {
    /// A new script's content (`rid`, `etag` and `ts` are given when it is stored).
    pub fn new(kind: ScriptKind, id: impl Into<String>, body: impl Into<String>) -> Script {
        Script { kind, id: id.into(), body: body.into(), trigger: None, rid: 0, etag: 0, ts: 0 }
    }

    /// The `_etag` value (quoted, as items' are).
    pub fn etag_text(&self) -> String {
        format!("\"{:08x}-0000-0000-0000-{:012x}\"", self.etag >> 48, self.etag & 0xFFFF_FFFF_FFFF)
    }
}

/// The scripts of a container, in the order they were created.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scripts {
    list: Vec<Script>,
    /// The last resource id and etag given.
    counter: u64,
}

fn missing(kind: ScriptKind, id: &str) -> StorageError {
    StorageError::not_found(format!("Resource Not Found: no {} with id '{id}'", kind.noun()))
}

fn check(script: &Script) -> Result<()> {
    if script.id.is_empty() || script.id.chars().count() > MAX_SCRIPT_ID {
        return Err(StorageError::bad_request(format!(
            "a {}'s id must be 1 to {MAX_SCRIPT_ID} characters",
            script.kind.noun()
        )));
    }
    if script.id.contains(['/', '\\', '?', '#']) {
        return Err(StorageError::bad_request(format!(
            "the {} id '{}' holds a character ids may not ('/', '\\', '?' or '#')",
            script.kind.noun(),
            script.id
        )));
    }
    if script.body.len() > MAX_SCRIPT_BODY {
        return Err(StorageError::new(
            ErrorKind::TooLarge,
            format!(
                "the {} body is {} bytes; at most {MAX_SCRIPT_BODY} are kept",
                script.kind.noun(),
                script.body.len()
            ),
        ));
    }
    if (script.kind == ScriptKind::Trigger) != script.trigger.is_some() {
        return Err(StorageError::bad_request(
            "a trigger needs a triggerType and a triggerOperation; other scripts none",
        ));
    }
    Ok(())
}

impl Container {
    /// The container's scripts of one kind, in the order they were created.
    pub fn scripts(&self, kind: ScriptKind) -> Vec<Script> {
        self.scripts.read().list.iter().filter(|s| s.kind == kind).cloned().collect()
    }

    /// One script (404 when there is none of that kind and id).
    pub fn script(&self, kind: ScriptKind, id: &str) -> Result<Script> {
        self.scripts.read().list.iter().find(|s| s.kind == kind && s.id == id).cloned().ok_or_else(|| missing(kind, id))
    }

    /// Stores a new script (409 when one of its kind has its id; 400 past the kind's limit).
    pub fn create_script(&self, script: Script) -> Result<Script> {
        self.change_scripts(|scripts, now| {
            check(&script)?;
            let same = scripts.list.iter().filter(|s| s.kind == script.kind);
            if same.clone().any(|s| s.id == script.id) {
                return Err(StorageError::conflict(format!(
                    "Resource with specified id or name already exists: a {} '{}'",
                    script.kind.noun(),
                    script.id
                )));
            }
            if same.count() >= script.kind.limit() {
                return Err(StorageError::bad_request(format!(
                    "a container holds at most {} {}s",
                    script.kind.limit(),
                    script.kind.noun()
                )));
            }
            scripts.counter += 1;
            let stored = Script { rid: scripts.counter, etag: scripts.counter, ts: now, ..script };
            scripts.list.push(stored.clone());
            Ok(stored)
        })
    }

    /// Replaces a script's body (and a trigger's type and operation); 404 when there is none.
    pub fn replace_script(&self, script: Script) -> Result<Script> {
        self.change_scripts(|scripts, now| {
            check(&script)?;
            scripts.counter += 1;
            let counter = scripts.counter;
            let Some(old) = scripts.list.iter_mut().find(|s| s.kind == script.kind && s.id == script.id) else {
                return Err(missing(script.kind, &script.id));
            };
            *old = Script { rid: old.rid, etag: counter, ts: now, ..script };
            Ok(old.clone())
        })
    }

    /// Deletes a script (404 when there is none).
    pub fn delete_script(&self, kind: ScriptKind, id: &str) -> Result<()> {
        self.change_scripts(|scripts, _| {
            let at = scripts.list.iter().position(|s| s.kind == kind && s.id == id).ok_or_else(|| missing(kind, id))?;
            scripts.list.remove(at);
            Ok(())
        })
    }

    /// Changes the set under its lock and logs the result (durably, in a durable store); on a
    /// refusal or a log failure the set stays as it was.
    fn change_scripts<T>(&self, change: impl FnOnce(&mut Scripts, u64) -> Result<T>) -> Result<T> {
        let mut guard = self.scripts.write();
        let mut next = guard.clone();
        let now = self.clock.read().unix_seconds();
        let out = change(&mut next, now)?;
        if let Some(journal) = self.journal() {
            let mut w = Writer::new();
            w.u8(tag::SCRIPTS).u32(journal.handle);
            encode_scripts(&next, &mut w);
            journal.durable.append_synced(&w.buf)?;
        }
        *guard = next;
        self.plan_epoch.store(NEXT_PLAN_EPOCH.fetch_add(1, Ordering::Relaxed), Ordering::Relaxed);
        Ok(out)
    }

    /// The scripts, for a checkpoint's container record.
    pub(crate) fn encode_scripts(&self, w: &mut Writer) {
        encode_scripts(&self.scripts.read(), w);
    }

    /// Replays a scripts record (after its tag and handle), or the scripts of a container record.
    pub(crate) fn replay_scripts(&self, r: &mut Reader<'_>) -> Decoded<()> {
        *self.scripts.write() = decode_scripts(r)?;
        Ok(())
    }
}

fn encode_scripts(scripts: &Scripts, w: &mut Writer) {
    w.u64(scripts.counter).u32(scripts.list.len() as u32);
    for s in &scripts.list {
        w.u8(s.kind.code()).str(&s.id).str(&s.body);
        match s.trigger {
            Some((ty, op)) => w.u8(1).str(ty.name()).str(op.name()),
            None => w.u8(0),
        };
        w.u64(s.rid).u64(s.etag).u64(s.ts);
    }
}

fn decode_scripts(r: &mut Reader<'_>) -> Decoded<Scripts> {
    let bad = |what: &str| crate::codec::DecodeError(format!("a script record: {what}"));
    let counter = r.u64()?;
    let n = r.u32()? as usize;
    if n > MAX_USER_DEFINED_FUNCTIONS + MAX_STORED_PROCEDURES + MAX_TRIGGERS {
        return Err(bad("more scripts than a container holds"));
    }
    let mut list = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = ScriptKind::from_code(r.u8()?).ok_or_else(|| bad("an unknown kind"))?;
        let (id, body) = (r.str()?.to_string(), r.str()?.to_string());
        let trigger = match r.u8()? {
            0 => None,
            1 => Some((
                TriggerType::parse(r.str()?).ok_or_else(|| bad("a trigger type"))?,
                TriggerOperation::parse(r.str()?).ok_or_else(|| bad("a trigger operation"))?,
            )),
            _ => return Err(bad("a trigger flag")),
        };
        let (rid, etag, ts) = (r.u64()?, r.u64()?, r.u64()?);
        list.push(Script { kind, id, body, trigger, rid, etag, ts });
    }
    Ok(Scripts { list, counter })
}
