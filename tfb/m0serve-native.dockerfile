# The native test: m0serve's built-in Go handler for /plaintext and /json
# (--native tfb), no Python; the floor the Python variants are measured
# against.
ARG M0SERVE_IMAGE=m0serve:0.4.0
FROM ${M0SERVE_IMAGE}
ENV M0_PORT=8080
EXPOSE 8080
# One worker per core: nproc counts the CPUs the container may run on
# (its cpuset; TechEmpower gives it the whole machine). The shell execs
# m0serve, which stays the container's process 1 and gets its signals.
ENTRYPOINT ["/bin/sh", "-c", "exec /usr/local/bin/m0serve --workers \"$(nproc)\" \"$@\"", "m0serve"]
CMD ["--native", "tfb"]
