//! A small binary encoding for log records: little-endian integers, length-prefixed bytes.

use cosmoql_catalog::epk::PartitionKeyComponent;
use cosmoql_catalog::partition_key::PartitionKey;

/// Appends values to a byte buffer.
#[derive(Debug, Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn new() -> Self {
        Writer::default()
    }

    pub fn u8(&mut self, v: u8) -> &mut Self {
        self.buf.push(v);
        self
    }

    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn i64(&mut self, v: i64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    pub fn f64(&mut self, v: f64) -> &mut Self {
        self.buf.extend_from_slice(&v.to_bits().to_le_bytes());
        self
    }

    pub fn bytes(&mut self, v: &[u8]) -> &mut Self {
        self.u32(v.len() as u32);
        self.buf.extend_from_slice(v);
        self
    }

    pub fn str(&mut self, v: &str) -> &mut Self {
        self.bytes(v.as_bytes())
    }

    pub fn opt_u64(&mut self, v: Option<u64>) -> &mut Self {
        match v {
            Some(v) => self.u8(1).u64(v),
            None => self.u8(0),
        }
    }

    pub fn opt_i64(&mut self, v: Option<i64>) -> &mut Self {
        match v {
            Some(v) => self.u8(1).i64(v),
            None => self.u8(0),
        }
    }

    pub fn key(&mut self, key: &PartitionKey) -> &mut Self {
        self.u8(key.0.len() as u8);
        for c in &key.0 {
            match c {
                PartitionKeyComponent::Undefined => self.u8(0),
                PartitionKeyComponent::Null => self.u8(1),
                PartitionKeyComponent::Bool(b) => self.u8(2).u8(*b as u8),
                PartitionKeyComponent::Number(n) => self.u8(3).f64(*n),
                PartitionKeyComponent::String(s) => self.u8(4).str(s),
            };
        }
        self
    }
}

/// Reads what a [`Writer`] wrote; every read fails cleanly on a short or malformed buffer.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

/// A record that does not decode (a bug, or a damaged file whose checksum still matched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

pub type Decoded<T> = Result<T, DecodeError>;

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, at: 0 }
    }

    pub fn is_done(&self) -> bool {
        self.at == self.buf.len()
    }

    fn take(&mut self, n: usize) -> Decoded<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.buf.len()).ok_or_else(|| {
            DecodeError(format!("a record ends early (wanted {n} bytes at {} of {})", self.at, self.buf.len()))
        })?;
        let out = &self.buf[self.at..end];
        self.at = end;
        Ok(out)
    }

    pub fn u8(&mut self) -> Decoded<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn u32(&mut self) -> Decoded<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap_or_default()))
    }

    pub fn u64(&mut self) -> Decoded<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }

    pub fn i64(&mut self) -> Decoded<i64> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().unwrap_or_default()))
    }

    pub fn f64(&mut self) -> Decoded<f64> {
        Ok(f64::from_bits(self.u64()?))
    }

    pub fn bytes(&mut self) -> Decoded<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }

    pub fn str(&mut self) -> Decoded<&'a str> {
        std::str::from_utf8(self.bytes()?).map_err(|_| DecodeError("a string that is not UTF-8".into()))
    }

    pub fn opt_u64(&mut self) -> Decoded<Option<u64>> {
        Ok(if self.u8()? == 1 { Some(self.u64()?) } else { None })
    }

    pub fn opt_i64(&mut self) -> Decoded<Option<i64>> {
        Ok(if self.u8()? == 1 { Some(self.i64()?) } else { None })
    }

    pub fn key(&mut self) -> Decoded<PartitionKey> {
        let n = self.u8()?;
        let mut out = Vec::with_capacity(n as usize);
        for _ in 0..n {
            out.push(match self.u8()? {
                0 => PartitionKeyComponent::Undefined,
                1 => PartitionKeyComponent::Null,
                2 => PartitionKeyComponent::Bool(self.u8()? != 0),
                3 => PartitionKeyComponent::Number(self.f64()?),
                4 => PartitionKeyComponent::String(self.str()?.into()),
                t => return Err(DecodeError(format!("a partition key component of unknown kind {t}"))),
            });
        }
        Ok(PartitionKey(out))
    }
}
