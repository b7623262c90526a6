//! Generates the message types from `protos/perfetto_trace.proto` with protox (a protobuf
//! compiler in Rust), so no `protoc` is needed on the machine, and prost-build.

fn main() {
    let proto = "protos/perfetto_trace.proto";
    println!("cargo:rerun-if-changed={proto}");
    let descriptors = protox::compile([proto], ["protos"]).unwrap_or_else(|err| {
        panic!("{proto}: {err:?}");
    });
    prost_build::Config::new()
        .compile_fds(descriptors)
        .unwrap_or_else(|err| panic!("generating the code of {proto}: {err}"));
}
