//! `onnx-roundtrip-codegen <model.onnx> <out_dir>`: burn-onnx 0.22.0's `ModelGen` writes the
//! Burn code (`<name>.rs`) and the Burnpack weights (`<name>.bpk`) for an ONNX file.
//!
//! A thin wrapper: burn-onnx ships the same as its `onnx2burn` binary, but cargo cannot run a
//! dependency's binary, and installing it would compile burn-onnx a second time.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, out_dir] = args.as_slice() else {
        eprintln!("usage: onnx-roundtrip-codegen <model.onnx> <out_dir>");
        std::process::exit(2);
    };
    burn_onnx::ModelGen::new()
        .input(input)
        .out_dir(out_dir)
        .run_from_cli();
}
