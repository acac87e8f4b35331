//! session-recall's native core: NDJSON event lines to `_bulk` create actions, a chunk
//! at a time, with no Python object made per event.
//!
//! It takes only what it is sure the Python path (`session_recall.indexer`: the
//! `Event` model, `Instant`, `to_document`, `scope_ids_of`) takes, and makes the same
//! bytes of it: the same `_id`, routing, partition, body and scope ids. Every other
//! line is declined, and handed back for the Python path to judge: a refusal is always
//! the Python path's, in its words. The rules it applies (field names, what counts as
//! blank, the limits) come from the Python side when a `Rules` is made, and the
//! partition of a day from a Python callable, so that each is written once.

mod json;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sha2::{Digest, Sha256};

use json::{read_object, write_str, write_value, Member, MemberKind, Nullable, Text, Value};

// The fields an event has, in the order a document body lists its first seven.
const USER_ID: usize = 0;
const SESSION_ID: usize = 1;
const TIMESTAMP: usize = 2;
const TYPE: usize = 3;
const TEXT: usize = 4;
const CONTACT_ID: usize = 5;
const INBOX_ID: usize = 6;
const CONVERSATION_TYPE: usize = 7;
const METADATA: usize = 8;
const EVENT_ID: usize = 9;
const FIELDS: [&str; 10] = [
    "user_id",
    "session_id",
    "timestamp",
    "type",
    "text",
    "contact_id",
    "inbox_id",
    "conversation_type",
    "metadata",
    "event_id",
];

fn kind_of(field: usize) -> MemberKind {
    match field {
        CONTACT_ID | INBOX_ID => MemberKind::Nullable,
        METADATA => MemberKind::Value,
        _ => MemberKind::Text,
    }
}

/// What an event must be to be taken here; made from the Python side's own rules.
#[pyclass(frozen, module = "session_recall_native")]
struct Rules {
    keys: HashMap<String, usize>,
    whitespace: Vec<char>,
    max_id_chars: usize,
    max_text_bytes: usize,
    default_conversation_type: String,
    // The document id digests the event's instant too (see `indexer.identity`).
    id_with_time: bool,
}

#[pymethods]
impl Rules {
    /// `keys` maps every key an event may carry (each field's name and its alias) to
    /// the field's name; it must name exactly the fields this core knows.
    #[new]
    #[pyo3(signature = (*, keys, whitespace, max_id_chars, max_text_bytes, default_conversation_type, id_with_time))]
    fn new(
        keys: HashMap<String, String>,
        whitespace: &str,
        max_id_chars: usize,
        max_text_bytes: usize,
        default_conversation_type: String,
        id_with_time: bool,
    ) -> PyResult<Self> {
        let mut fields = HashMap::new();
        let mut named = [false; FIELDS.len()];
        for (key, field) in keys {
            let Some(index) = FIELDS.iter().position(|f| *f == field) else {
                return Err(PyValueError::new_err(format!(
                    "the native core does not know the field {field:?}: rebuild it"
                )));
            };
            named[index] = true;
            fields.insert(key, index);
        }
        if let Some(missing) = named.iter().position(|n| !n) {
            return Err(PyValueError::new_err(format!(
                "the event model has no field {:?}, which the native core writes: rebuild it",
                FIELDS[missing]
            )));
        }
        Ok(Rules {
            keys: fields,
            whitespace: whitespace.chars().collect(),
            max_id_chars,
            max_text_bytes,
            default_conversation_type,
            id_with_time,
        })
    }
}

impl Rules {
    fn identifier(&self, text: &str) -> bool {
        text.chars().any(|c| !self.whitespace.contains(&c))
            && (text.len() <= self.max_id_chars || text.chars().count() <= self.max_id_chars)
    }
}

/// A timestamp of the one form taken here, `YYYY-MM-DDTHH:MM:SS[.fffffffff]Z`, the time
/// of day in range; the day itself is checked by the Python callable.
struct Stamp<'a> {
    day: &'a str,
    seconds: i64,
    fraction: &'a str,
}

fn parse_stamp(text: &str) -> Option<Stamp<'_>> {
    let b = text.as_bytes();
    if b.len() < 20 || b.len() > 30 || b[b.len() - 1] != b'Z' {
        return None;
    }
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    let shape = digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    if !shape {
        return None;
    }
    let two = |at: usize| i64::from(b[at] - b'0') * 10 + i64::from(b[at + 1] - b'0');
    let (hour, minute, second) = (two(11), two(14), two(17));
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let fraction = if b.len() == 20 {
        ""
    } else {
        if b[19] != b'.' || b.len() == 21 || !digits(20..b.len() - 1) {
            return None;
        }
        &text[20..text.len() - 1]
    };
    Some(Stamp { day: &text[..10], seconds: hour * 3600 + minute * 60 + second, fraction })
}

/// SHA-256 of `canonical`, as 64 lowercase hex digits.
fn hex_digest(canonical: &[u8]) -> [u8; 64] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(canonical);
    let mut out = [0u8; 64];
    for (i, byte) in digest.iter().enumerate() {
        out[2 * i] = HEX[(byte >> 4) as usize];
        out[2 * i + 1] = HEX[(byte & 0xf) as usize];
    }
    out
}

/// A JSON list of strings (and nulls, and one integer), as `digest` renders it.
enum Item<'a> {
    Str(&'a str),
    Null,
    Int(i64),
}

fn canonical_list(out: &mut Vec<u8>, items: &[Item]) {
    out.clear();
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match item {
            Item::Str(s) => write_str(out, s),
            Item::Null => out.extend_from_slice(b"null"),
            Item::Int(v) => out.extend_from_slice(v.to_string().as_bytes()),
        }
    }
    out.push(b']');
}

/// Where each document's source line is: in which of the batch's buffers, and where.
#[derive(Clone, Copy)]
struct Source {
    buffer: u32,
    start: u32,
    end: u32,
}

/// A chunk of create actions, ready to send, with what the writer asks of each.
#[pyclass(module = "session_recall_native")]
struct Batch {
    body: Vec<u8>,
    // Per document: its action's span in `body` (header line, body line, newlines),
    // the header line's length, its event id's span in `ids`.
    spans: Vec<(u32, u32)>,
    header_lengths: Vec<u32>,
    ids: Vec<u8>,
    id_spans: Vec<(u32, u32)>,
    nanos: Vec<i64>,
    scopes: Vec<[u32; 4]>,
    scope_counts: Vec<u8>,
    index_of: Vec<u32>,
    lines: Vec<u64>,
    sources: Vec<Source>,
    buffers: Vec<Py<PyBytes>>,
    scope_names: Vec<String>,
    scope_keys: HashMap<Vec<u8>, u32>,
    index_names: Vec<String>,
    #[pyo3(get)]
    end: u64,
}

impl Batch {
    fn new() -> Self {
        Batch {
            body: Vec::new(),
            spans: Vec::new(),
            header_lengths: Vec::new(),
            ids: Vec::new(),
            id_spans: Vec::new(),
            nanos: Vec::new(),
            scopes: Vec::new(),
            scope_counts: Vec::new(),
            index_of: Vec::new(),
            lines: Vec::new(),
            sources: Vec::new(),
            buffers: Vec::new(),
            scope_names: Vec::new(),
            scope_keys: HashMap::new(),
            index_names: Vec::new(),
            end: 0,
        }
    }

    fn scope(&mut self, canonical: &[u8]) -> u32 {
        if let Some(&index) = self.scope_keys.get(canonical) {
            return index;
        }
        let hex = String::from_utf8(hex_digest(canonical).to_vec()).expect("hex is ASCII");
        // An event's own scope is named apart (`scope.EVENT_PREFIX`): the writer asks
        // for those only where events were ever erased one by one.
        let name = if canonical.starts_with(b"[\"event\",") { format!("ev-{hex}") } else { hex };
        let index = self.scope_names.len() as u32;
        self.scope_names.push(name);
        self.scope_keys.insert(canonical.to_vec(), index);
        index
    }

    fn index(&mut self, name: &str) -> u32 {
        match self.index_names.iter().position(|n| n == name) {
            Some(i) => i as u32,
            None => {
                self.index_names.push(name.to_owned());
                (self.index_names.len() - 1) as u32
            }
        }
    }

    fn check(&self, position: usize) -> PyResult<usize> {
        if position < self.spans.len() {
            Ok(position)
        } else {
            Err(PyIndexError::new_err("no such document in the batch"))
        }
    }

    fn push_action(&mut self, header: &[u8], body: &[u8]) -> usize {
        let start = self.body.len();
        self.body.extend_from_slice(header);
        self.body.push(b'\n');
        self.body.extend_from_slice(body);
        self.body.push(b'\n');
        self.spans.push((start as u32, (self.body.len() - start) as u32));
        self.header_lengths.push(header.len() as u32);
        self.spans.len() - 1
    }

    fn push_id(&mut self, id: &str) {
        let start = self.ids.len();
        self.ids.extend_from_slice(id.as_bytes());
        self.id_spans.push((start as u32, id.len() as u32));
    }

    fn push_scopes(&mut self, scopes: &[u32]) {
        let mut fixed = [0u32; 4];
        fixed[..scopes.len()].copy_from_slice(scopes);
        self.scopes.push(fixed);
        self.scope_counts.push(scopes.len() as u8);
    }

    fn event_id_str(&self, position: usize) -> &str {
        let (start, len) = self.id_spans[position];
        std::str::from_utf8(&self.ids[start as usize..(start + len) as usize]).expect("ids are str")
    }
}

#[pymethods]
impl Batch {
    fn __len__(&self) -> usize {
        self.spans.len()
    }

    /// The `_bulk` body of the documents at `positions` (all of them when None), each
    /// line ending with a newline.
    #[pyo3(signature = (positions=None))]
    fn body<'py>(&self, py: Python<'py>, positions: Option<Vec<usize>>) -> PyResult<Bound<'py, PyBytes>> {
        let Some(positions) = positions else {
            return Ok(PyBytes::new(py, &self.body));
        };
        let mut out = Vec::new();
        for position in positions {
            let (start, len) = self.spans[self.check(position)?];
            out.extend_from_slice(&self.body[start as usize..(start + len) as usize]);
        }
        Ok(PyBytes::new(py, &out))
    }

    /// The bytes of its `_bulk` body.
    #[getter]
    fn size(&self) -> usize {
        self.body.len()
    }

    /// One batch of the documents of `batches`, in order: document `p` of the second
    /// is at `p + len(first)`, and so on. Each keeps its own line number and source.
    #[staticmethod]
    fn merged(py: Python<'_>, batches: Vec<PyRef<'_, Batch>>) -> Batch {
        let mut out = Batch::new();
        let mut scope_at: HashMap<String, u32> = HashMap::new();
        for batch in &batches {
            let base = out.body.len() as u32;
            out.body.extend_from_slice(&batch.body);
            out.spans.extend(batch.spans.iter().map(|&(start, len)| (start + base, len)));
            out.header_lengths.extend_from_slice(&batch.header_lengths);
            let id_base = out.ids.len() as u32;
            out.ids.extend_from_slice(&batch.ids);
            out.id_spans.extend(batch.id_spans.iter().map(|&(start, len)| (start + id_base, len)));
            out.nanos.extend_from_slice(&batch.nanos);
            let scopes: Vec<u32> = batch
                .scope_names
                .iter()
                .map(|name| {
                    *scope_at.entry(name.clone()).or_insert_with(|| {
                        out.scope_names.push(name.clone());
                        (out.scope_names.len() - 1) as u32
                    })
                })
                .collect();
            for (fixed, &count) in batch.scopes.iter().zip(&batch.scope_counts) {
                let mapped: Vec<u32> =
                    fixed[..count as usize].iter().map(|&scope| scopes[scope as usize]).collect();
                out.push_scopes(&mapped);
            }
            let indices: Vec<u32> = batch.index_names.iter().map(|name| out.index(name)).collect();
            out.index_of.extend(batch.index_of.iter().map(|&i| indices[i as usize]));
            out.lines.extend_from_slice(&batch.lines);
            let buffer_base = out.buffers.len() as u32;
            out.buffers.extend(batch.buffers.iter().map(|buffer| buffer.clone_ref(py)));
            out.sources.extend(
                batch.sources.iter().map(|s| Source { buffer: s.buffer + buffer_base, ..*s }),
            );
            out.end = batch.end;
        }
        out
    }

    /// The event id of every document, in order.
    fn event_ids(&self) -> Vec<&str> {
        (0..self.spans.len()).map(|p| self.event_id_str(p)).collect()
    }

    /// The input line number of every document, in order.
    fn lines(&self) -> Vec<u64> {
        self.lines.clone()
    }

    /// Every scope id of the batch's events, each once.
    fn scopes(&self) -> Vec<String> {
        self.scope_names.clone()
    }

    /// The user scope id of every document (its first scope), each once.
    fn user_scopes(&self) -> Vec<String> {
        let mut seen = vec![false; self.scope_names.len()];
        let mut out = Vec::new();
        for fixed in &self.scopes {
            let user = fixed[0] as usize;
            if !seen[user] {
                seen[user] = true;
                out.push(self.scope_names[user].clone());
            }
        }
        out
    }

    /// The own scope ids (`scope.EVENT_PREFIX`) of the documents whose user scope is
    /// one of `users`, each once: what the writer asks for where events of those users
    /// were erased one by one, and for no other document.
    fn own_scopes_of(&self, users: HashSet<String>) -> Vec<String> {
        let wanted: Vec<bool> = self.scope_names.iter().map(|n| users.contains(n)).collect();
        let mut seen = vec![false; self.scope_names.len()];
        let mut out = Vec::new();
        for (fixed, &count) in self.scopes.iter().zip(&self.scope_counts) {
            if !wanted[fixed[0] as usize] {
                continue;
            }
            for &scope in &fixed[1..count as usize] {
                let scope = scope as usize;
                if !seen[scope] && self.scope_names[scope].starts_with("ev-") {
                    seen[scope] = true;
                    out.push(self.scope_names[scope].clone());
                }
            }
        }
        out
    }

    /// Every partition the batch writes to, each once.
    fn indices(&self) -> Vec<String> {
        self.index_names.clone()
    }

    /// The positions of the documents a tombstone covers: one of their scopes was
    /// erased at or after their timestamp (`erased`: scope id to erasure nanoseconds).
    fn covered(&self, erased: &Bound<'_, PyDict>) -> PyResult<Vec<usize>> {
        let mut at = vec![i64::MIN; self.scope_names.len()];
        for (i, name) in self.scope_names.iter().enumerate() {
            if let Some(value) = erased.get_item(name)? {
                at[i] = value.extract::<i64>()?;
            }
        }
        Ok((0..self.spans.len())
            .filter(|&p| {
                let count = self.scope_counts[p] as usize;
                self.scopes[p][..count].iter().any(|&s| self.nanos[p] <= at[s as usize])
            })
            .collect())
    }

    fn event_id(&self, position: usize) -> PyResult<String> {
        Ok(self.event_id_str(self.check(position)?).to_owned())
    }

    /// The create action's header line.
    fn header<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyBytes>> {
        let (start, _) = self.spans[self.check(position)?];
        let len = self.header_lengths[position];
        Ok(PyBytes::new(py, &self.body[start as usize..(start + len) as usize]))
    }

    /// The number of the input line the document came from.
    fn line(&self, position: usize) -> PyResult<u64> {
        Ok(self.lines[self.check(position)?])
    }

    /// The input line the document came from, as it was read.
    fn source<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyBytes>> {
        let source = self.sources[self.check(position)?];
        let buffer = self.buffers[source.buffer as usize].bind(py).as_bytes();
        Ok(PyBytes::new(py, &buffer[source.start as usize..source.end as usize]))
    }
}

/// What `Builder.feed` stopped at.
const DONE: u8 = 0; // the region is read
const FULL: u8 = 1; // the batch is full: `take` it, then feed on from `next`
const DECLINED: u8 = 2; // the line `start..end` is the Python path's to judge
const TOO_LONG: u8 = 3; // the line `start..end` is longer than the line limit

/// Fills batches from regions of NDJSON input, counting lines and bytes as it goes.
#[pyclass(module = "session_recall_native")]
struct Builder {
    rules: Py<Rules>,
    day: Py<PyAny>,
    days: HashMap<String, Option<(String, i64)>>,
    max_count: usize,
    max_bytes: usize,
    max_line_bytes: usize,
    batch: Batch,
    /// The input offset just past the last line read, and that line's number.
    #[pyo3(get, set)]
    position: u64,
    #[pyo3(get, set)]
    number: u64,
    // Scratch buffers, kept between lines: the action, and what `commit` registers.
    header: Vec<u8>,
    document: Vec<u8>,
    canonical: Vec<u8>,
    event_id: String,
    partition: String,
    scope_keys: [Vec<u8>; 4],
}

// Bytes `bytes.strip()` removes: a line of these alone is blank, not an event.
fn blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
}

const BOM: &[u8] = b"\xef\xbb\xbf";
// Partitions of days seen, kept for the next lines; a run's events share few days.
const MAX_DAYS: usize = 4096;

/// What `prepare` made of a line, besides the action in the scratch buffers.
struct Prepared {
    scope_count: usize,
    nanos: i64,
}

#[pymethods]
impl Builder {
    /// `day(YYYY-MM-DD)` answers the partition of that day and its first second since
    /// the epoch, or None when not every time of that day is an event's instant.
    #[new]
    #[pyo3(signature = (rules, *, day, max_count, max_bytes, max_line_bytes, position=0, number=0))]
    fn new(
        rules: Py<Rules>,
        day: Py<PyAny>,
        max_count: usize,
        max_bytes: usize,
        max_line_bytes: usize,
        position: u64,
        number: u64,
    ) -> PyResult<Self> {
        if max_count == 0 || max_bytes == 0 {
            return Err(PyValueError::new_err("max_count and max_bytes must be positive"));
        }
        Ok(Builder {
            rules,
            day,
            days: HashMap::new(),
            max_count,
            max_bytes,
            max_line_bytes,
            batch: Batch::new(),
            position,
            number,
            header: Vec::new(),
            document: Vec::new(),
            canonical: Vec::new(),
            event_id: String::new(),
            partition: String::new(),
            scope_keys: Default::default(),
        })
    }

    fn __len__(&self) -> usize {
        self.batch.spans.len()
    }

    /// Reads the lines of `data[start:end]` (each ends with a newline, or at `end`)
    /// into the batch until one needs the caller: returns (what, line start, line end,
    /// next start). Every line before `next` is counted in `position` and `number`.
    fn feed(
        &mut self,
        py: Python<'_>,
        data: Bound<'_, PyBytes>,
        start: usize,
        end: usize,
    ) -> PyResult<(u8, usize, usize, usize)> {
        let bytes = data.as_bytes();
        if start > end || end > bytes.len() {
            return Err(PyValueError::new_err("the region is outside the data"));
        }
        let buffer = match self.batch.buffers.last() {
            Some(last) if last.is(&data) => (self.batch.buffers.len() - 1) as u32,
            _ => {
                self.batch.buffers.push(data.clone().unbind());
                (self.batch.buffers.len() - 1) as u32
            }
        };
        let mut at = start;
        while at < end {
            let stop = memchr::memchr(b'\n', &bytes[at..end]).map_or(end, |i| at + i);
            let next = if stop < end { stop + 1 } else { end };
            let line = &bytes[at..stop];
            if line.len() > self.max_line_bytes {
                self.advance(at, next);
                return Ok((TOO_LONG, at, stop, next));
            }
            if blank(line) {
                self.advance(at, next);
                at = next;
                continue;
            }
            let room = self.max_bytes - self.batch.body.len().min(self.max_bytes);
            match self.prepare(py, line)? {
                None => {
                    self.advance(at, next);
                    return Ok((DECLINED, at, stop, next));
                }
                Some(_) if !self.batch.spans.is_empty() && self.action_size() > room => {
                    return Ok((FULL, at, stop, at)); // read again into the next batch
                }
                Some(prepared) => {
                    self.advance(at, next);
                    self.commit(prepared, Source { buffer, start: at as u32, end: stop as u32 });
                    if self.batch.spans.len() >= self.max_count {
                        return Ok((FULL, at, stop, next));
                    }
                }
            }
            at = next;
        }
        Ok((DONE, end, end, end))
    }

    /// Whether an action of `size` bytes still fits in the batch.
    fn room_for(&self, size: usize) -> bool {
        self.batch.spans.is_empty()
            || (self.batch.spans.len() < self.max_count && self.batch.body.len() + size <= self.max_bytes)
    }

    /// Adds a document the Python path made, from the line just counted (`number`).
    #[pyo3(signature = (*, header, body, event_id, nanos, scopes, index, source))]
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        header: &[u8],
        body: &[u8],
        event_id: &str,
        nanos: i64,
        scopes: Vec<String>,
        index: &str,
        source: Bound<'_, PyBytes>,
    ) -> PyResult<()> {
        if scopes.is_empty() || scopes.len() > 4 {
            return Err(PyValueError::new_err("an event has one to four scopes"));
        }
        let batch = &mut self.batch;
        batch.push_action(header, body);
        batch.push_id(event_id);
        batch.nanos.push(nanos);
        let mut ids = Vec::with_capacity(scopes.len());
        for scope in scopes {
            // Keyed by the id itself: a native key is a canonical list, never 64 hex digits.
            let index = match batch.scope_names.iter().position(|n| *n == scope) {
                Some(i) => i as u32,
                None => {
                    batch.scope_names.push(scope);
                    (batch.scope_names.len() - 1) as u32
                }
            };
            ids.push(index);
        }
        batch.push_scopes(&ids);
        let index = batch.index(index);
        batch.index_of.push(index);
        batch.lines.push(self.number);
        let length = source.as_bytes().len() as u32;
        batch.buffers.push(source.unbind());
        let buffer = (batch.buffers.len() - 1) as u32;
        batch.sources.push(Source { buffer, start: 0, end: length });
        Ok(())
    }

    /// The batch filled so far, ending at `position`; the next one starts empty.
    fn take(&mut self) -> Batch {
        let mut batch = std::mem::replace(&mut self.batch, Batch::new());
        batch.end = self.position;
        batch
    }
}

impl Builder {
    fn advance(&mut self, start: usize, next: usize) {
        self.position += (next - start) as u64;
        self.number += 1;
    }

    fn action_size(&self) -> usize {
        self.header.len() + self.document.len() + 2
    }

    fn day(&mut self, py: Python<'_>, day: &str) -> PyResult<Option<(String, i64)>> {
        if let Some(found) = self.days.get(day) {
            return Ok(found.clone());
        }
        let answer = self.day.bind(py).call1((day,))?;
        let found: Option<(String, i64)> = answer.extract()?;
        if self.days.len() >= MAX_DAYS {
            self.days.clear();
        }
        self.days.insert(day.to_owned(), found.clone());
        Ok(found)
    }

    /// The line's create action into the scratch buffers, or None to decline it.
    fn prepare(&mut self, py: Python<'_>, line: &[u8]) -> PyResult<Option<Prepared>> {
        let data = line.strip_prefix(BOM).unwrap_or(line);
        let rules_ref = self.rules.clone_ref(py);
        let rules = rules_ref.get();
        let mut texts: [Option<Cow<str>>; 10] = Default::default();
        let mut nulls = [false; 10];
        let mut metadata: Option<Value> = None;
        let mut seen = [false; 10];
        let read = read_object(
            data,
            |key| rules.keys.get(key).map(|&f| (f, kind_of(f))),
            |field, member| {
                if std::mem::replace(&mut seen[field], true) {
                    return false; // given twice, in either of its forms
                }
                match member {
                    Member::Text(Text(text)) => texts[field] = Some(text),
                    Member::Nullable(Nullable::Value(Text(text))) => texts[field] = Some(text),
                    Member::Nullable(Nullable::Null) => nulls[field] = true,
                    Member::Value(Value::Null) => nulls[field] = true,
                    Member::Value(value @ Value::Object(_)) => metadata = Some(value),
                    Member::Value(_) => return false,
                }
                true
            },
        );
        if read.is_none() {
            return Ok(None);
        }
        let (Some(user), Some(session), Some(stamp), Some(kind), Some(text)) = (
            texts[USER_ID].as_deref(),
            texts[SESSION_ID].as_deref(),
            texts[TIMESTAMP].as_deref(),
            texts[TYPE].as_deref(),
            texts[TEXT].as_deref(),
        ) else {
            return Ok(None);
        };
        let conversation = texts[CONVERSATION_TYPE].as_deref().unwrap_or(&rules.default_conversation_type);
        let (contact, inbox) = (texts[CONTACT_ID].as_deref(), texts[INBOX_ID].as_deref());
        let identifiers = [Some(user), Some(session), Some(kind), Some(conversation), contact, inbox];
        // A text that is not plain ASCII gets its `words` field from the Python path
        // (`core.words`: Unicode normalisation and scripts), so the core declines it.
        if !identifiers.iter().flatten().all(|id| rules.identifier(id))
            || text.len() > rules.max_text_bytes
            || !text.is_ascii()
        {
            return Ok(None);
        }
        if let Some(id) = texts[EVENT_ID].as_deref() {
            if !rules.identifier(id) {
                return Ok(None);
            }
        }
        let Some(parsed) = parse_stamp(stamp) else {
            return Ok(None);
        };
        let Some((partition, day_seconds)) = self.day(py, parsed.day)? else {
            return Ok(None);
        };
        let mut fraction = [b'0'; 9];
        fraction[..parsed.fraction.len()].copy_from_slice(parsed.fraction.as_bytes());
        let fraction_nanos: i64 = std::str::from_utf8(&fraction).unwrap().parse().unwrap();
        let nanos = (day_seconds + parsed.seconds) * 1_000_000_000 + fraction_nanos;

        let canonical = &mut self.canonical;
        let derived;
        let event_id = match texts[EVENT_ID].as_deref() {
            Some(id) => id,
            None => {
                canonical_list(
                    canonical,
                    &[
                        Item::Str(user),
                        Item::Str(session),
                        Item::Int(nanos),
                        Item::Str(kind),
                        Item::Str(text),
                        contact.map_or(Item::Null, Item::Str),
                        inbox.map_or(Item::Null, Item::Str),
                        Item::Str(conversation),
                    ],
                );
                derived = String::from_utf8(hex_digest(canonical).to_vec()).expect("hex");
                &derived
            }
        };
        if rules.id_with_time {
            canonical_list(canonical, &[Item::Str(user), Item::Str(event_id), Item::Int(nanos)]);
        } else {
            canonical_list(canonical, &[Item::Str(user), Item::Str(event_id)]);
        }
        let doc_id = hex_digest(canonical);

        let header = &mut self.header;
        header.clear();
        header.extend_from_slice(b"{\"create\":{\"_index\":");
        write_str(header, &partition);
        header.extend_from_slice(b",\"routing\":");
        write_str(header, user);
        header.extend_from_slice(b",\"_id\":\"");
        header.extend_from_slice(&doc_id);
        header.extend_from_slice(b"\"}}");

        let body = &mut self.document;
        body.clear();
        body.extend_from_slice(b"{\"event_id\":");
        write_str(body, event_id);
        body.extend_from_slice(b",\"user_id\":");
        write_str(body, user);
        body.extend_from_slice(b",\"session_id\":");
        write_str(body, session);
        body.extend_from_slice(b",\"timestamp\":\"");
        body.extend_from_slice(&stamp.as_bytes()[..19]);
        body.push(b'.');
        body.extend_from_slice(&fraction);
        body.extend_from_slice(b"Z\",\"type\":");
        write_str(body, kind);
        body.extend_from_slice(b",\"text\":");
        write_str(body, text);
        body.extend_from_slice(b",\"conversation_type\":");
        write_str(body, conversation);
        if let Some(contact) = contact {
            body.extend_from_slice(b",\"contact_id\":");
            write_str(body, contact);
        }
        if let Some(inbox) = inbox {
            body.extend_from_slice(b",\"inbox_id\":");
            write_str(body, inbox);
        }
        if let Some(metadata) = &metadata {
            body.extend_from_slice(b",\"metadata\":");
            write_value(body, metadata);
        }
        body.push(b'}');
        if self.action_size() > self.max_bytes {
            return Ok(None); // the Python path words the refusal
        }

        let keys = &mut self.scope_keys;
        canonical_list(&mut keys[0], &[Item::Str("user"), Item::Str(user)]);
        canonical_list(&mut keys[1], &[Item::Str("session"), Item::Str(user), Item::Str(session)]);
        canonical_list(&mut keys[2], &[Item::Str("event"), Item::Str(user), Item::Str(event_id)]);
        let mut scope_count = 3;
        if let (Some(contact), Some(inbox)) = (contact, inbox) {
            let items =
                [Item::Str("contact"), Item::Str(user), Item::Str(contact), Item::Str(inbox)];
            canonical_list(&mut keys[3], &items);
            scope_count = 4;
        }
        self.event_id.clear();
        self.event_id.push_str(event_id);
        self.partition = partition;
        Ok(Some(Prepared { scope_count, nanos }))
    }

    /// Adds the action `prepare` left in the scratch buffers.
    fn commit(&mut self, prepared: Prepared, source: Source) {
        let batch = &mut self.batch;
        batch.push_action(&self.header, &self.document);
        batch.push_id(&self.event_id);
        batch.nanos.push(prepared.nanos);
        let mut scopes = [0u32; 4];
        for (slot, key) in scopes.iter_mut().zip(&self.scope_keys[..prepared.scope_count]) {
            *slot = batch.scope(key);
        }
        batch.push_scopes(&scopes[..prepared.scope_count]);
        let index = batch.index(&self.partition);
        batch.index_of.push(index);
        batch.lines.push(self.number);
        batch.sources.push(source);
    }
}

#[pymodule]
fn session_recall_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Rules>()?;
    m.add_class::<Builder>()?;
    m.add_class::<Batch>()?;
    m.add("DONE", DONE)?;
    m.add("FULL", FULL)?;
    m.add("DECLINED", DECLINED)?;
    m.add("TOO_LONG", TOO_LONG)?;
    Ok(())
}
