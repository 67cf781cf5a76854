# The operator's container image: built with the pinned Rust toolchain, run from distroless as
# a non-root user. Build from the workspace root:
#
#   docker build -t ghcr.io/c5c3/barbican-operator:0.1.0 .
#
# The runtime image has glibc and CA certificates and nothing else: no shell, no package
# manager. The Helm chart runs it with a read-only root filesystem as UID 65532.

FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p barbican-operator --bin barbican-operator \
 && install -D -m 0755 target/release/barbican-operator /out/barbican-operator

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/barbican-operator /usr/local/bin/barbican-operator
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/barbican-operator"]
CMD ["run"]
