# The native test: m0serve's built-in Go handler for /plaintext and /json
# (--native tfb), no Python; the floor the Python variants are measured
# against.
ARG M0SERVE_IMAGE=m0serve:0.4.0
FROM ${M0SERVE_IMAGE}
ENV M0_PORT=8080
EXPOSE 8080
CMD ["--native", "tfb"]
