//! Property names shared by every document of the process, and the two forms of the encoding.
//!
//! Items of one container repeat the same property names (`id`, `deviceId`, `location`, ...):
//! written in every document they were a third of a telemetry item's bytes. In memory a
//! document's key is the number of a name in one table for the whole process, or the key's own
//! bytes when the table does not hold it; on disk (the log, checkpoints) and wherever bytes leave
//! the process, a document is written in the portable form, every key spelled out
//! ([`super::Doc::to_bytes`]), and the in-memory form is rebuilt when it is read
//! ([`super::Doc::from_bytes`]).
//!
//! The two forms differ only in an object entry's key header (a varint `v`):
//!
//! | form | `v` | followed by |
//! | --- | --- | --- |
//! | portable | the key's byte length | the key's bytes |
//! | in memory, even `v` | twice the key's byte length | the key's bytes |
//! | in memory, odd `v` | twice the name's number, plus one | nothing |
//!
//! The table is bounded: at most [`MAX_NAMES`] names of at most [`MAX_NAME_LEN`] bytes, only
//! names JSON writes without escapes; past that, keys stay inline (a document is then as large
//! as before, never wrong). A name, once in the table, stays there with its number, so one key is
//! always encoded the same way in a process and documents compare by their bytes. Each name is
//! kept as its JSON (`"name":`), which a document's JSON output copies whole.

use std::cell::Cell;
use std::sync::{LazyLock, OnceLock, PoisonError, RwLock};

use super::*;

/// The most names the table holds: full, with names of the longest kind, the table and its
/// index take about 15 MB. Names are added as documents are read, before they are stored: JSON
/// refused later (a syntax error past its keys, an item over its size) has added its names, so
/// a client can fill the table with names no item keeps; documents stay correct, and from then
/// on new names take their own bytes.
pub const MAX_NAMES: usize = 1 << 16;

/// The longest name the table takes, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// Name `i` as JSON: `"name":`.
static NAMES: [OnceLock<Box<[u8]>>; MAX_NAMES] = [const { OnceLock::new() }; MAX_NAMES];

/// Names to their numbers.
type Numbers = HashMap<Box<[u8]>, u32, foldhash::fast::FixedState>;

/// The numbers of the names in [`NAMES`] (its length is the next number).
static NUMBERS: LazyLock<RwLock<Numbers>> = LazyLock::new(|| RwLock::new(HashMap::default()));

/// Slots of this thread's cache of recent names.
const CACHE_SLOTS: usize = 256;

thread_local! {
    /// Recent names by their first seven bytes and length and their last eight bytes (see
    /// [`number_of`]): a hit costs two words compared (and a long name's bytes), not a lock.
    /// An empty slot's number is one the table never gives.
    static CACHE: [Cell<(u64, u64, u32)>; CACHE_SLOTS] = const { [const { Cell::new((0, 0, u32::MAX)) }; CACHE_SLOTS] };
}

/// Name `id`'s bytes, if the table holds it.
#[inline]
pub(super) fn name(id: usize) -> Option<&'static [u8]> {
    let json = NAMES.get(id)?.get()?;
    json.get(1..json.len().saturating_sub(2))
}

/// Name `id` as JSON (`"name":`), if the table holds it.
#[inline]
pub(super) fn name_json(id: usize) -> Option<&'static [u8]> {
    NAMES.get(id)?.get().map(|json| &json[..])
}

/// The number of `key` in the table, adding it when there is room; `None` for a key the table
/// does not take (too long, escaped in JSON, not UTF-8) or once the table is full. `head` is
/// the key's print, `key_print(key, key.len())`.
#[inline]
pub(super) fn number_of(key: &[u8], head: u64) -> Option<u32> {
    if key.len() > MAX_NAME_LEN {
        return None;
    }
    // The first seven bytes and the length, and the last eight: they are the whole name up to
    // 15 bytes (longer ones are compared with the table's), and names alike at their start
    // (`sensor_a`, `sensor_b`) take different slots.
    let tail = key.last_chunk::<8>().map_or(0, |t| u64::from_le_bytes(*t));
    let mix = head ^ tail.rotate_left(29).wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    let slot = (mix.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % CACHE_SLOTS;
    let (seen_head, seen_tail, id) = CACHE.with(|cache| cache[slot].get());
    // (An empty slot would match the empty name but for its number.)
    if seen_head == head && seen_tail == tail && id != u32::MAX && (key.len() <= 15 || name(id as usize) == Some(key)) {
        return Some(id);
    }
    let id = number_in_table(key)?;
    CACHE.with(|cache| cache[slot].set((head, tail, id)));
    Some(id)
}

/// [`number_of`] past this thread's cache.
#[cold]
fn number_in_table(key: &[u8]) -> Option<u32> {
    if std::str::from_utf8(key).is_err() {
        return None;
    }
    let mut json = Vec::with_capacity(key.len() + 3);
    write_escaped(&mut json, key);
    if json.len() != key.len() + 2 {
        return None;
    }
    if let Some(&id) = NUMBERS.read().unwrap_or_else(PoisonError::into_inner).get(key) {
        return Some(id);
    }
    let mut numbers = NUMBERS.write().unwrap_or_else(PoisonError::into_inner);
    if let Some(&id) = numbers.get(key) {
        return Some(id);
    }
    let id = numbers.len();
    let slot = NAMES.get(id)?;
    json.push(b':');
    // Numbers are given out under the write lock, each once: the slot is empty.
    slot.set(json.into_boxed_slice()).ok()?;
    let id = u32::try_from(id).ok()?;
    numbers.insert(key.into(), id);
    Some(id)
}

/// How a document's object keys are written (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// Every key spelled out: the bytes on disk and on the wire.
    Portable,
    /// Keys by their number in the name table where it has them.
    Memory,
}

/// The key of the entry at `pos` in an object's payload `b` in `form`: its bytes and the
/// position after it (where the value starts). `None` for malformed bytes or a number the table
/// does not hold.
#[inline(always)]
pub(super) fn read_key(b: &[u8], pos: usize, form: Form) -> Option<(&[u8], usize)> {
    let (v, p) = read_varint(b, pos)?;
    let len = match form {
        Form::Portable => v,
        Form::Memory if v & 1 == 1 => return Some((name(v >> 1)?, p)),
        Form::Memory => v >> 1,
    };
    let end = p.checked_add(len)?;
    Some((b.get(p..end)?, end))
}

/// Writes the key of the in-memory object entry at the start of `b` as JSON with its colon
/// (`"key":`); the bytes after the key (the entry's value first).
#[inline(always)]
pub(super) fn write_key<'a>(out: &mut Vec<u8>, b: &'a [u8]) -> Option<&'a [u8]> {
    let (v, p) = read_varint(b, 0)?;
    if v & 1 == 1 {
        out.extend_from_slice(name_json(v >> 1)?);
        return b.get(p..);
    }
    let end = p.checked_add(v >> 1)?;
    write_escaped(out, b.get(p..end)?);
    out.push(b':');
    b.get(end..)
}

/// Appends an object entry's key in `form`.
#[inline]
pub(super) fn push_key_in(buf: &mut Vec<u8>, key: &[u8], form: Form) {
    match form {
        Form::Portable => {
            push_varint(buf, key.len());
            buf.extend_from_slice(key);
        }
        Form::Memory => {
            push_memory_key(buf, key, key_print(key, key.len()));
        }
    }
}

/// Appends an object entry's key in the in-memory form, given its print (`key_print(key,
/// key.len())`, which the direct JSON reader has made already); the bytes written.
#[inline]
pub(super) fn push_memory_key(buf: &mut Vec<u8>, key: &[u8], print: u64) -> usize {
    let at = buf.len();
    match number_of(key, print) {
        Some(id) => push_varint(buf, (id as usize) << 1 | 1),
        None => {
            push_varint(buf, key.len() << 1);
            buf.extend_from_slice(key);
        }
    }
    buf.len() - at
}

/// Appends the value at the start of `b` (in `from`) to `out` in the other form: its size in
/// `b`, and the size of its portable form as [`super::Doc::to_bytes`] writes it (container
/// headers and key lengths in their shortest form, whatever `b` used); `None` for malformed
/// bytes (then `out` holds a partial write the caller drops).
pub(super) fn convert(b: &[u8], from: Form, out: &mut Vec<u8>, depth: usize) -> Option<(usize, usize)> {
    let to = match from {
        Form::Portable => Form::Memory,
        Form::Memory => Form::Portable,
    };
    let (h, size) = head(b)?;
    match h {
        Head::Array(count, payload) | Head::Object(count, payload) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            let object = matches!(h, Head::Object(..));
            let start = begin_container(out, if object { tag::OBJECT } else { tag::ARRAY });
            let mut pos = 0;
            let mut portable = 0usize;
            while pos < payload.len() {
                if object {
                    let (key, p) = read_key(payload, pos, from)?;
                    push_key_in(out, key, to);
                    portable = portable.checked_add(varint_len(key.len()) + key.len())?;
                    pos = p;
                }
                let (size, value) = convert(payload.get(pos..)?, from, out, depth + 1)?;
                pos += size;
                portable = portable.checked_add(value)?;
            }
            end_container(out, start, count);
            Some((size, 1 + varint_len(count) + varint_len(portable) + portable))
        }
        _ => {
            out.extend_from_slice(b.get(..size)?);
            Some((size, size))
        }
    }
}
