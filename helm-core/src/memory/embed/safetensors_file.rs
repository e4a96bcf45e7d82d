//! A safetensors file read tensor by tensor, each straight into the `f32`
//! buffer the encoder keeps.
//!
//! Reading the whole file and then converting it (as candle's
//! `load_buffer` does) holds the file's bytes and the converted tensors at
//! once: for all-MiniLM-L6-v2 a peak of 209 MB to keep 123 MB. Read this
//! way, in 1 MiB pieces, the peak is what is kept (118 MB), and the load
//! takes 140 ms instead of 215 (`cargo bench -p helm-core --features
//! local-embed --bench embed`). The
//! format: an 8-byte little-endian header length, a JSON header naming each
//! tensor's dtype, shape and byte range past the header, then the bytes.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use candle_core::{DType, Device, Tensor};

/// What was wrong, for the caller to name the file in.
pub(crate) type FileError = String;

/// Real headers are a few kilobytes; a larger length is not a header.
const MAX_HEADER: u64 = 16 << 20;
/// How much of a tensor is read at a time.
const PIECE: usize = 1 << 20;

/// An open safetensors file whose header has been read and checked.
pub(crate) struct SafetensorsFile {
    file: File,
    /// Where the tensors' bytes start: past the length and the header.
    data_start: u64,
    entries: HashMap<String, Entry>,
}

/// One tensor named in the header.
struct Entry {
    /// A float's dtype, or the name of another kind.
    dtype: std::result::Result<DType, String>,
    shape: Vec<usize>,
    /// Its bytes, `[start, end)` past the header.
    start: u64,
    end: u64,
}

impl SafetensorsFile {
    /// Opens `path` and checks its header: JSON that names float tensors
    /// whose byte ranges fit their shapes, in a file exactly as long as the
    /// header says (a download cut short is caught here, not at first use).
    pub(crate) fn open(path: &Path) -> Result<Self, FileError> {
        let mut file = File::open(path).map_err(|e| format!("it cannot be opened ({e})"))?;
        let mut len = [0u8; 8];
        file.read_exact(&mut len)
            .map_err(|_| "it is too short to be a safetensors file".to_string())?;
        let len = u64::from_le_bytes(len);
        if len > MAX_HEADER {
            return Err("it does not start with a safetensors header".into());
        }
        let mut header = vec![0u8; len as usize];
        file.read_exact(&mut header)
            .map_err(|_| "its safetensors header is cut short".to_string())?;
        let header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&header)
            .map_err(|e| format!("its safetensors header is not JSON ({e})"))?;
        let mut entries = HashMap::with_capacity(header.len());
        let mut data_end = 0;
        for (name, meta) in header {
            // The header may carry free-form metadata beside the tensors.
            if name == "__metadata__" {
                continue;
            }
            let entry = Entry::from_header(&name, &meta)?;
            data_end = data_end.max(entry.end);
            entries.insert(name, entry);
        }
        let size = file
            .metadata()
            .map_err(|e| format!("its size cannot be read ({e})"))?
            .len();
        let described = 8 + len + data_end;
        if size != described {
            return Err(format!(
                "it is {size} bytes where its header describes {described}: download it again"
            ));
        }
        Ok(SafetensorsFile {
            file,
            data_start: 8 + len,
            entries,
        })
    }

    /// The names of the tensors the file holds.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// The tensor `name` as f32 on the CPU, with its shape; `None` if the
    /// file has no such tensor.
    pub(crate) fn read_f32(&mut self, name: &str) -> Option<Result<Tensor, FileError>> {
        let entry = self.entries.get(name)?;
        let (dtype, shape, start, end) = (
            entry.dtype.clone(),
            entry.shape.clone(),
            entry.start,
            entry.end,
        );
        Some(match dtype {
            Ok(dtype) => self.read(name, dtype, &shape, start, end),
            Err(kind) => Err(format!("tensor {name} is {kind}, not a float")),
        })
    }

    fn read(
        &mut self,
        name: &str,
        dtype: DType,
        shape: &[usize],
        start: u64,
        end: u64,
    ) -> Result<Tensor, FileError> {
        let failed = |e: std::io::Error| format!("tensor {name} cannot be read ({e})");
        self.file
            .seek(SeekFrom::Start(self.data_start + start))
            .map_err(failed)?;
        let mut left = (end - start) as usize;
        if dtype == DType::F32 {
            let mut values = Vec::with_capacity(left / 4);
            let mut piece = vec![0u8; PIECE.min(left)];
            while left > 0 {
                let bytes = &mut piece[..PIECE.min(left)];
                self.file.read_exact(bytes).map_err(failed)?;
                values.extend(
                    bytes
                        .chunks_exact(4)
                        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
                );
                left -= bytes.len();
            }
            return Tensor::from_vec(values, shape, &Device::Cpu)
                .map_err(|e| format!("tensor {name}: {e}"));
        }
        // Other float widths are converted whole: no shipped model has them,
        // so their brief second copy costs nothing in practice.
        let mut bytes = vec![0u8; left];
        self.file.read_exact(&mut bytes).map_err(failed)?;
        Tensor::from_raw_buffer(&bytes, dtype, shape, &Device::Cpu)
            .and_then(|t| t.to_dtype(DType::F32))
            .map_err(|e| format!("tensor {name}: {e}"))
    }
}

impl Entry {
    /// Reads `{"dtype": "F32", "shape": [..], "data_offsets": [start, end]}`.
    fn from_header(name: &str, meta: &serde_json::Value) -> Result<Entry, FileError> {
        let bad = |what: &str| format!("tensor {name} in its header has {what}");
        let dtype = meta
            .get("dtype")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad("no dtype"))?;
        // Only floats are read; the others (BERT exports carry I64 position
        // ids) need their width to check the file adds up.
        let (float, width) = match dtype {
            "F32" => (Some(DType::F32), 4),
            "F16" => (Some(DType::F16), 2),
            "BF16" => (Some(DType::BF16), 2),
            "F64" => (Some(DType::F64), 8),
            "I64" | "U64" => (None, 8),
            "I32" | "U32" => (None, 4),
            "I16" | "U16" => (None, 2),
            "I8" | "U8" | "BOOL" | "F8_E4M3" | "F8_E5M2" => (None, 1),
            other => return Err(bad(&format!("the unknown dtype {other}"))),
        };
        let dtype = float.ok_or_else(|| dtype.to_string());
        let shape = meta
            .get("shape")
            .and_then(|s| s.as_array())
            .and_then(|s| {
                s.iter()
                    .map(|d| d.as_u64().map(|d| d as usize))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| bad("no shape"))?;
        let offsets = meta
            .get("data_offsets")
            .and_then(|o| o.as_array())
            .and_then(|o| Some((o.first()?.as_u64()?, o.get(1)?.as_u64()?)))
            .ok_or_else(|| bad("no data offsets"))?;
        let (start, end) = offsets;
        let count: u64 = shape.iter().map(|&d| d as u64).product();
        if end < start || end - start != count * width {
            return Err(bad("a byte range that does not fit its shape"));
        }
        Ok(Entry {
            dtype,
            shape,
            start,
            end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A safetensors file of `tensors` (name, dtype, shape, bytes) at `path`.
    fn write(path: &Path, tensors: &[(&str, &str, &[usize], Vec<u8>)]) -> std::io::Result<()> {
        let mut header = serde_json::Map::new();
        let mut data = Vec::new();
        for (name, dtype, shape, bytes) in tensors {
            header.insert(
                (*name).to_string(),
                serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [data.len(), data.len() + bytes.len()]}),
            );
            data.extend_from_slice(bytes);
        }
        let header = serde_json::Value::Object(header).to_string();
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(header.as_bytes());
        file.extend_from_slice(&data);
        std::fs::write(path, file)
    }

    #[test]
    fn floats_of_every_width_are_read_as_f32_and_other_kinds_are_named() -> Result<(), FileError> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("model.safetensors");
        // More than one 1 MiB piece, so the pieces must join in order.
        let long: Vec<f32> = (0..300_000).map(|i| i as f32 * 0.5).collect();
        // 1.5 and -2.0 as IEEE half-precision bits.
        let half = [0x3E00u16, 0xC000].map(u16::to_le_bytes);
        write(
            &path,
            &[
                (
                    "long",
                    "F32",
                    &[1000, 300],
                    long.iter().flat_map(|x| x.to_le_bytes()).collect(),
                ),
                ("half", "F16", &[2], half.concat()),
                (
                    "position_ids",
                    "I64",
                    &[2],
                    [0i64, 1].iter().flat_map(|x| x.to_le_bytes()).collect(),
                ),
            ],
        )
        .map_err(|e| e.to_string())?;
        let mut file = SafetensorsFile::open(&path)?;
        let read = |file: &mut SafetensorsFile, name: &str| -> Result<Vec<f32>, FileError> {
            let tensor = file.read_f32(name).ok_or("missing")??;
            tensor
                .flatten_all()
                .and_then(|t| t.to_vec1())
                .map_err(|e| e.to_string())
        };
        assert_eq!(read(&mut file, "long")?, long);
        assert_eq!(read(&mut file, "half")?, vec![1.5, -2.0]);
        assert_eq!(
            read(&mut file, "position_ids"),
            Err("tensor position_ids is I64, not a float".to_string())
        );
        assert!(file.read_f32("absent").is_none());
        Ok(())
    }

    #[test]
    fn a_byte_range_that_does_not_fit_its_shape_is_refused() -> Result<(), FileError> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("model.safetensors");
        write(&path, &[("w", "F32", &[3], vec![0; 8])]).map_err(|e| e.to_string())?;
        let Err(why) = SafetensorsFile::open(&path) else {
            return Err("opened a tensor two bytes short of its shape".into());
        };
        assert_eq!(
            why,
            "tensor w in its header has a byte range that does not fit its shape"
        );
        Ok(())
    }
}
