//! A safetensors file read tensor by tensor, each straight into the `f32`
//! buffer the encoder keeps.
//!
//! Reading the whole file and then converting it (as candle's
//! `load_buffer` does) holds the file's bytes and the converted tensors at
//! once: for all-MiniLM-L6-v2 a peak of 209 MB to keep 123 MB. Read this
//! way, in 1 MiB pieces, the peak is what is kept (118 MB), and the load
//! takes 140 ms instead of 215 (`cargo bench -p helm-core --features
//! local-embed --bench embed`). The format: an 8-byte little-endian header
//! length, a JSON header naming each tensor's dtype, shape and byte range
//! past the header, then the bytes. The header is read and checked by the
//! format's own crate (`safetensors`: the ranges are consecutive and fit
//! their shapes); only the reading of the bytes is ours.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use candle_core::{DType, Device, Tensor};
use safetensors::tensor::Metadata;

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
    header: Metadata,
    /// The tensors' names, in the file's order.
    names: Vec<String>,
}

impl SafetensorsFile {
    /// Opens `path` and checks its header: tensors whose byte ranges fit
    /// their shapes, in a file exactly as long as the header says (a
    /// download cut short is caught here, not at first use).
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
        let header: Metadata = serde_json::from_slice(&header)
            .map_err(|e| format!("its safetensors header is not valid ({e}): download it again"))?;
        let size = file
            .metadata()
            .map_err(|e| format!("its size cannot be read ({e})"))?
            .len();
        let described = 8 + len + header.data_len() as u64;
        if size != described {
            return Err(format!(
                "it is {size} bytes where its header describes {described}: download it again"
            ));
        }
        Ok(SafetensorsFile {
            file,
            data_start: 8 + len,
            names: header.offset_keys(),
            header,
        })
    }

    /// The names of the tensors the file holds.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The tensor `name` as f32 on the CPU, with its shape; `None` if the
    /// file has no such tensor.
    pub(crate) fn read_f32(&mut self, name: &str) -> Option<Result<Tensor, FileError>> {
        let info = self.header.info(name)?;
        let (kind, shape, (start, end)) = (info.dtype, info.shape.clone(), info.data_offsets);
        // Only the common float widths are read: BERT exports also carry
        // I64 position ids, which the encoder makes itself.
        Some(match DType::try_from(kind) {
            Ok(dtype @ (DType::F32 | DType::F16 | DType::BF16 | DType::F64)) => {
                self.read(name, dtype, &shape, start, end)
            }
            _ => Err(format!(
                "tensor {name} is {kind}; only F32, F16, BF16 and F64 tensors are read"
            )),
        })
    }

    fn read(
        &mut self,
        name: &str,
        dtype: DType,
        shape: &[usize],
        start: usize,
        end: usize,
    ) -> Result<Tensor, FileError> {
        let failed = |e: std::io::Error| format!("tensor {name} cannot be read ({e})");
        self.file
            .seek(SeekFrom::Start(self.data_start + start as u64))
            .map_err(failed)?;
        let mut left = end - start;
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
            Err(
                "tensor position_ids is I64; only F32, F16, BF16 and F64 tensors are read"
                    .to_string()
            )
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
            return Err("opened a tensor four bytes short of its shape".into());
        };
        assert!(
            why.starts_with("its safetensors header is not valid (")
                && why.ends_with("): download it again"),
            "{why}"
        );
        Ok(())
    }

    #[test]
    fn a_file_cut_short_is_refused_with_its_sizes() -> Result<(), FileError> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("model.safetensors");
        write(&path, &[("w", "F32", &[3], vec![0; 12])]).map_err(|e| e.to_string())?;
        let whole = std::fs::read(&path).map_err(|e| e.to_string())?;
        std::fs::write(&path, &whole[..whole.len() - 5]).map_err(|e| e.to_string())?;
        let Err(why) = SafetensorsFile::open(&path) else {
            return Err("opened a file five bytes short".into());
        };
        let (cut, described) = (whole.len() - 5, whole.len());
        assert_eq!(
            why,
            format!("it is {cut} bytes where its header describes {described}: download it again")
        );
        Ok(())
    }
}
