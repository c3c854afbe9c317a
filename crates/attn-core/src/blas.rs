//! A CBLAS `sgemm` loaded at run time, for the CPU backend's matrix products.
//!
//! Why: Burn's CPU backend (flex) multiplies matrices with the `gemm` crate, which on this
//! project's benchmark machine runs the linear layers of MAT 1.8x slower than PyTorch's
//! BLAS at one thread (docs/BENCHMARKS.md, "Burn ops against PyTorch's"); the GEMMs are
//! most of a training step. A system BLAS (OpenBLAS) does the same products at close to
//! the CPU's peak. It is loaded with `dlopen` when the program first multiplies, so
//! nothing is needed at build time and a machine without it keeps Burn's `gemm`
//! ([`crate::matmul()`] falls back).
//!
//! Which library: `MOLATTN_BLAS=off` (or `none`, `0`) disables it; `MOLATTN_BLAS=/path/lib.so`
//! names a library exporting `cblas_sgemm` (the standard CBLAS ABI with 32-bit integers);
//! otherwise the first of `libopenblas.so.0`, `libopenblas.so` that loads (Debian:
//! `apt install libopenblas0`). OpenBLAS's own threads are set to one: the products are
//! cut into row blocks on rayon's threads (one pool, no oversubscription). Another library
//! named in `MOLATTN_BLAS` keeps its own threading: limit it yourself (e.g.
//! `MKL_NUM_THREADS=1`).
//!
//! Where none of the default libraries is present, [`init_or_install`] lets a program
//! install one first (`cargo xtask` installs Debian's `libopenblas0` where that needs no
//! password; `xtask/src/openblas_install.rs`).
//!
//! OpenBLAS picks its kernels from the CPU model when it loads, and a release older than
//! the CPU falls back to generic SSE3 kernels ("Prescott"): Debian 12's OpenBLAS 0.3.21
//! does so on 5th-generation Xeons, where its sgemm then runs at a fifth of its AVX-512
//! speed, slower than Burn's `gemm`. [`init`] (called by `cargo xtask` before any thread
//! starts) names the kernel family from the CPU's features in `OPENBLAS_CORETYPE` when the
//! user has not, on every CPU (so also where OpenBLAS would have chosen well itself: on a
//! Zen CPU it gets the Haswell family, on a Sapphire Rapids SkylakeX); and a library that
//! still reports a generic core on a CPU with AVX2 is not used.

use std::ffi::{CStr, c_char, c_int};
use std::sync::{Mutex, OnceLock};

use burn::tensor::{DType, Shape, TensorData};
use burn_flex::FlexTensor;
use rayon::prelude::*;

/// `cblas_sgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`.
type Sgemm = unsafe extern "C" fn(
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    f32,
    *const f32,
    c_int,
    *const f32,
    c_int,
    f32,
    *mut f32,
    c_int,
);

const CBLAS_ROW_MAJOR: c_int = 101;
const CBLAS_NO_TRANS: c_int = 111;
const CBLAS_TRANS: c_int = 112;

/// Below this many multiply-adds a product runs on the calling thread (rayon's task
/// overhead, a few microseconds, would dominate).
const PARALLEL_MACS: usize = 64 * 64 * 64;

/// Why a library that loaded is not used, for [`blas_summary`].
static DECLINED: Mutex<Option<String>> = Mutex::new(None);

/// The loaded library.
pub struct Blas {
    sgemm: Sgemm,
    description: String,
    // Keeps the symbols valid for the life of the program.
    _library: libloading::Library,
}

impl Blas {
    /// What was loaded: the library file and, for OpenBLAS, its build configuration
    /// (`openblas_get_config`, e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen").
    pub fn description(&self) -> &str {
        &self.description
    }
}

impl Blas {
    /// `c[m, n] += a[m, k] b[k, n]`, every matrix row-major and contiguous, on the calling
    /// thread (one `cblas_sgemm` call, beta = 1). For callers that run their own threads
    /// (the SMILES generator's fused decoding step, one part of the batch per thread).
    ///
    /// # Panics
    /// If a slice is shorter than its matrix or a dimension exceeds `i32::MAX`.
    pub fn gemm_accumulate(&self, [m, n, k]: [usize; 3], a: &[f32], b: &[f32], c: &mut [f32]) {
        assert!(
            a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
            "gemm_accumulate: slices shorter than [{m}, {k}] x [{k}, {n}] -> [{m}, {n}]"
        );
        let int = |x: usize| c_int::try_from(x).expect("gemm_accumulate: dimension over i32");
        if m == 0 || n == 0 || k == 0 {
            return;
        }
        // SAFETY: the slices hold the three row-major matrices (checked above), and the
        // leading dimensions are their row lengths.
        unsafe {
            (self.sgemm)(
                CBLAS_ROW_MAJOR,
                CBLAS_NO_TRANS,
                CBLAS_NO_TRANS,
                int(m),
                int(n),
                int(k),
                1.0,
                a.as_ptr(),
                int(k),
                b.as_ptr(),
                int(n),
                1.0,
                c.as_mut_ptr(),
                int(n),
            );
        }
    }
}

impl std::fmt::Debug for Blas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.description())
    }
}

/// The BLAS used by [`crate::matmul()`] on the CPU backend, loaded once (see the module
/// documentation); `None` when disabled or not found.
pub fn blas() -> Option<&'static Blas> {
    BLAS.get_or_init(|| load(INSTALL.get().copied())).as_ref()
}

/// What [`init_or_install`] registered to install a BLAS when none opens.
static INSTALL: OnceLock<fn() -> bool> = OnceLock::new();

/// The library [`blas`] returns, loaded on first use (or by [`init`] / [`init_or_install`]).
static BLAS: OnceLock<Option<Blas>> = OnceLock::new();

/// One line for logs and benchmark metadata: the BLAS in use, or why Burn's `gemm` is.
pub fn blas_summary() -> String {
    match blas() {
        Some(blas) => format!("BLAS: {}", blas.description()),
        None => match std::env::var("MOLATTN_BLAS") {
            Ok(v) if is_off(&v) => "BLAS: off (MOLATTN_BLAS), Burn's gemm".to_string(),
            _ => match DECLINED.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                Some(why) => format!("BLAS: not used, {why}; Burn's gemm"),
                None => match std::env::var("MOLATTN_BLAS") {
                    Ok(path) if !path.trim().is_empty() => format!(
                        "BLAS: MOLATTN_BLAS={path} did not load or has no cblas_sgemm; Burn's gemm"
                    ),
                    _ => "BLAS: none found (apt install libopenblas0), Burn's gemm".to_string(),
                },
            },
        },
    }
}

/// Prepares and loads the BLAS: sets `OPENBLAS_CORETYPE` from the CPU's features when it
/// is unset (`SkylakeX` with AVX-512 F/BW/VL/DQ, `Haswell` with AVX2 and FMA; OpenBLAS
/// reads it once, when it loads), then loads the library (see the module documentation).
///
/// # Safety
/// Call at the start of `main`, before any other thread exists: it writes the process
/// environment, which another thread reading it at the same time would race with.
pub unsafe fn init() {
    // SAFETY: the caller's guarantee (see above).
    unsafe { set_core_type() };
    blas();
}

/// As [`init`], for a program that installs what it needs (`cargo xtask`), but without
/// loading: the library is loaded when the program first asks for it ([`blas`], at its
/// first matrix product), so a command refused by its own checks installs nothing. Then,
/// when none of the default libraries (`libopenblas.so.0`, `libopenblas.so`) can be
/// opened, and `MOLATTN_BLAS` neither names a library nor turns BLAS off, `install` is
/// called once and, when it reports success, the libraries are tried again. A library
/// that opens but is declined (generic kernels) does not call `install`.
///
/// # Safety
/// As [`init`]: before any other thread exists.
pub unsafe fn init_or_install(install: fn() -> bool) {
    // SAFETY: the caller's guarantee (see above).
    unsafe { set_core_type() };
    let _ = INSTALL.set(install);
}

/// Sets `OPENBLAS_CORETYPE` from the CPU's features when it is unset.
///
/// # Safety
/// As [`init`].
unsafe fn set_core_type() {
    if std::env::var_os("OPENBLAS_CORETYPE").is_none()
        && let Some(core) = core_type()
    {
        // SAFETY: the caller guarantees no other thread runs (see [`init`]).
        unsafe { std::env::set_var("OPENBLAS_CORETYPE", core) };
    }
}

/// OpenBLAS's kernel family for this CPU, from its instruction-set extensions.
fn core_type() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512f") && has!("avx512bw") && has!("avx512vl") && has!("avx512dq") {
            return Some("SkylakeX");
        }
        if has!("avx2") && has!("fma") {
            return Some("Haswell");
        }
    }
    None
}

/// OpenBLAS's generic x86 kernels (SSE2/SSE3 era), what it falls back to on a CPU model it
/// does not know.
const GENERIC_CORES: [&str; 8] = [
    "prescott",
    "core2",
    "penryn",
    "dunnington",
    "nehalem",
    "katmai",
    "coppermine",
    "northwood",
];

fn is_off(value: &str) -> bool {
    matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "off" | "none" | "0"
    )
}

/// Loads the first candidate library (see the module documentation); when none of the
/// default candidates opens, calls `install` (if given) and, on its success, tries again.
fn load(install: Option<fn() -> bool>) -> Option<Blas> {
    let candidates: Vec<String> = match std::env::var("MOLATTN_BLAS") {
        Ok(v) if is_off(&v) => return None,
        Ok(v) if !v.trim().is_empty() => return load_first(&[v]).ok().flatten(),
        _ => vec!["libopenblas.so.0".into(), "libopenblas.so".into()],
    };
    match load_first(&candidates) {
        Ok(blas) => blas,
        Err(NoneOpened) => {
            let installed = install.is_some_and(|install| install());
            if installed {
                load_first(&candidates).ok().flatten()
            } else {
                None
            }
        }
    }
}

/// None of the candidate libraries could be opened (as opposed to opened and not usable).
struct NoneOpened;

/// The first candidate that opens and exports `cblas_sgemm`; `Ok(None)` when one opened
/// but none is usable (no `cblas_sgemm`, or declined: see [`DECLINED`]).
fn load_first(candidates: &[String]) -> Result<Option<Blas>, NoneOpened> {
    let mut opened = false;
    for name in candidates {
        let name = name.clone();
        // SAFETY: loading a shared library runs its initialisers; the candidates are
        // BLAS libraries, whose initialisers only set up their thread pools.
        let Ok(library) = (unsafe { libloading::Library::new(&name) }) else {
            continue;
        };
        opened = true;
        // SAFETY: `cblas_sgemm` has this signature in every CBLAS (LP64 integers).
        let Ok(sgemm) = (unsafe { library.get::<Sgemm>(b"cblas_sgemm\0") }) else {
            continue;
        };
        let sgemm = *sgemm;
        let mut description = name.clone();
        // SAFETY: OpenBLAS's documented C API; absent elsewhere (then skipped).
        unsafe {
            if let Ok(core) =
                library.get::<unsafe extern "C" fn() -> *const c_char>(b"openblas_get_corename\0")
            {
                let text = core();
                let core = if text.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(text).to_string_lossy().to_ascii_lowercase()
                };
                if GENERIC_CORES.contains(&core.trim()) && core_type().is_some() {
                    // Slower than Burn's gemm on this CPU (see the module documentation).
                    *DECLINED.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!(
                        "{name} chose its generic '{core}' kernels on this CPU (set \
                         OPENBLAS_CORETYPE, e.g. SkylakeX or Haswell)"
                    ));
                    return Ok(None);
                }
            }
            if let Ok(set) =
                library.get::<unsafe extern "C" fn(c_int)>(b"openblas_set_num_threads\0")
            {
                set(1);
            }
            if let Ok(config) =
                library.get::<unsafe extern "C" fn() -> *const c_char>(b"openblas_get_config\0")
            {
                let text = config();
                if !text.is_null() {
                    description =
                        format!("{} ({name})", CStr::from_ptr(text).to_string_lossy().trim());
                }
            }
        }
        return Ok(Some(Blas {
            sgemm,
            description,
            _library: library,
        }));
    }
    if opened { Ok(None) } else { Err(NoneOpened) }
}

/// How one operand's matrices are laid out for CBLAS: transposed or not, leading dimension,
/// and the element offset of each batch matrix.
struct Operand<'a> {
    data: &'a [f32],
    trans: bool,
    ld: usize,
    offsets: Vec<usize>,
}

impl<'a> Operand<'a> {
    /// `None` when the last two dimensions are not a BLAS layout (unit stride along
    /// one of them) or a stride is negative: the caller makes the tensor contiguous.
    fn new(tensor: &'a FlexTensor) -> Option<Self> {
        let layout = tensor.layout();
        let dims = layout.shape().to_vec();
        let strides = layout.strides();
        let r = dims.len();
        if strides.iter().any(|&s| s < 0) {
            return None;
        }
        let (rows, cols) = (dims[r - 2], dims[r - 1]);
        let (rs, cs) = (strides[r - 2] as usize, strides[r - 1] as usize);
        let (trans, ld) = if cs == 1 && rs >= cols.max(1) {
            (false, rs)
        } else if rs == 1 && cs >= rows.max(1) {
            (true, cs)
        } else if rows == 1 && cs == 1 {
            (false, cols.max(1))
        } else if cols == 1 && rs == 1 {
            (true, rows.max(1))
        } else {
            return None;
        };
        // Offsets of each matrix of the batch, in row-major batch order.
        let mut offsets = vec![layout.start_offset()];
        for axis in 0..r - 2 {
            let stride = strides[axis] as usize;
            offsets = offsets
                .iter()
                .flat_map(|&o| (0..dims[axis]).map(move |i| o + i * stride))
                .collect();
        }
        Some(Self {
            data: tensor.storage::<f32>(),
            trans,
            ld,
            offsets,
        })
    }
}

/// `lhs [..., m, k] x rhs [..., k, n] -> [..., m, n]` with the loaded BLAS, the batch
/// dimensions equal on both sides (no broadcasting). `None` when the product is not one
/// this function takes (not f32, ranks or batch dimensions differ, a dimension over
/// `i32::MAX`): the caller uses Burn's matmul.
///
/// Each matrix product is cut into blocks of output rows, one per rayon thread when the
/// batch has fewer matrices than threads; larger batches run one matrix per task.
///
/// `bias` (`[n]`), when given, is added to every output row: each block starts from it
/// instead of zeros, so the sum costs no pass of its own (`None` when its length is not
/// `n`).
pub(crate) fn matmul(
    blas: &Blas,
    lhs: &FlexTensor,
    rhs: &FlexTensor,
    bias: Option<&[f32]>,
) -> Option<FlexTensor> {
    if lhs.dtype() != DType::F32 || rhs.dtype() != DType::F32 {
        return None;
    }
    let ld = lhs.layout().shape().to_vec();
    let rd = rhs.layout().shape().to_vec();
    let r = ld.len();
    if r < 2 || rd.len() != r || ld[..r - 2] != rd[..r - 2] || ld[r - 1] != rd[r - 2] {
        return None;
    }
    let (m, k, n) = (ld[r - 2], ld[r - 1], rd[r - 1]);
    let fits = |x: usize| x <= i32::MAX as usize;
    if ![m, k, n].into_iter().all(fits) {
        return None;
    }
    let mut out_dims = ld[..r - 2].to_vec();
    out_dims.extend([m, n]);
    let batch: usize = ld[..r - 2].iter().product();
    if bias.is_some_and(|b| b.len() != n) {
        return None;
    }
    if m == 0 || n == 0 || batch == 0 {
        return Some(FlexTensor::empty(Shape::from(out_dims), DType::F32));
    }
    if k == 0 {
        let rows = match bias {
            Some(b) => b.repeat(batch * m),
            None => vec![0.0; batch * m * n],
        };
        return Some(FlexTensor::from_data(TensorData::new(rows, out_dims)));
    }
    let (lhs_c, rhs_c);
    let a = match Operand::new(lhs) {
        Some(a) => a,
        None => {
            lhs_c = lhs.to_contiguous();
            Operand::new(&lhs_c)?
        }
    };
    let b = match Operand::new(rhs) {
        Some(b) => b,
        None => {
            rhs_c = rhs.to_contiguous();
            Operand::new(&rhs_c)?
        }
    };
    if ![a.ld, b.ld].into_iter().all(fits) {
        return None;
    }

    // Not `FlexTensor::empty`: it zero-fills a byte vector and then copies it into a
    // 16-byte aligned one (burn-flex 0.22.1), two single-threaded passes over every
    // product's output. Here each block is zeroed (or set to the bias) by the task that
    // runs its sgemm (in parallel, and the block is then in cache), so the output is
    // initialised whatever the BLAS does, and sgemm gets beta = 1 (C = A B + C): with
    // beta = 0 OpenBLAS zeroes C itself first, a second pass over the block.
    let len = batch * m * n;
    let mut out_vec: Vec<f32> = Vec::with_capacity(len);
    let out_data: &mut [std::mem::MaybeUninit<f32>] = &mut out_vec.spare_capacity_mut()[..len];
    let macs = batch * m * n * k;
    let threads = rayon::current_num_threads();
    // Row blocks per matrix: enough blocks in all for every thread.
    let blocks = if macs < PARALLEL_MACS || batch >= threads {
        1
    } else {
        threads.div_ceil(batch).min(m)
    };
    let block_rows = m.div_ceil(blocks);
    let run = |matrix: usize, row0: usize, c: &mut [std::mem::MaybeUninit<f32>]| {
        let rows = c.len() / n;
        match bias {
            Some(b) => c.chunks_exact_mut(n).for_each(|row| {
                row.iter_mut()
                    .zip(b)
                    .for_each(|(o, &v)| *o = std::mem::MaybeUninit::new(v))
            }),
            None => c.fill(std::mem::MaybeUninit::new(0.0)),
        }
        // Row `row0` of op(A): row `row0` of A, or column `row0` of A^T's storage.
        let a_off = a.offsets[matrix] + if a.trans { row0 } else { row0 * a.ld };
        // SAFETY: the offsets and leading dimensions come from the tensors' own layouts,
        // which address only their storage (flex's layout invariant; `Operand::new` takes
        // unit-stride, non-negative layouts only), and `c` is `rows x n` contiguous.
        unsafe {
            (blas.sgemm)(
                CBLAS_ROW_MAJOR,
                if a.trans { CBLAS_TRANS } else { CBLAS_NO_TRANS },
                if b.trans { CBLAS_TRANS } else { CBLAS_NO_TRANS },
                rows as c_int,
                n as c_int,
                k as c_int,
                1.0,
                a.data.as_ptr().add(a_off),
                a.ld as c_int,
                b.data.as_ptr().add(b.offsets[matrix]),
                b.ld as c_int,
                1.0,
                c.as_mut_ptr().cast::<f32>(),
                n as c_int,
            );
        }
    };
    let chunk = block_rows * n;
    let blocks_per_matrix = m.div_ceil(block_rows);
    let task = |(i, c): (usize, &mut [std::mem::MaybeUninit<f32>])| {
        let (matrix, block) = (i / blocks_per_matrix, i % blocks_per_matrix);
        run(matrix, block * block_rows, c)
    };
    // Blocks never straddle two matrices: each matrix's rows are split on their own.
    let pieces: Vec<(usize, &mut [std::mem::MaybeUninit<f32>])> = out_data
        .chunks_mut(m * n)
        .flat_map(|c| c.chunks_mut(chunk))
        .enumerate()
        .collect();
    if macs < PARALLEL_MACS || threads == 1 {
        pieces.into_iter().for_each(task);
    } else {
        pieces.into_par_iter().for_each(task);
    }
    // SAFETY: the blocks above cover all `len` elements, and each was zeroed (or set to
    // the bias) before its sgemm added to it.
    unsafe { out_vec.set_len(len) };
    Some(FlexTensor::from_data(TensorData::new(out_vec, out_dims)))
}
