# m0serve on Debian 12: a build stage compiles the binary with `make
# build`, which links Debian's CPython 3.11 statically (its
# libpython3.11.a is built with profile-guided optimisation, its shared
# library is not: pybridge/pkg-config.sh); the runtime stage is
# debian:bookworm-slim with python3 (the standard library and its
# extension modules), the binary, and the app, run as a non-root user.
#
#   docker build -t m0serve .
#   docker run --rm -p 8000:8000 m0serve                      # examples/hello_wsgi.py
#   docker run --rm -p 8000:8000 -v $PWD:/app m0serve main:app  # your app in /app
#
# The image has no pip: an app with dependencies builds an image FROM
# this one, with a venv made from its requirements.txt in a builder
# stage (examples/docker/Dockerfile and its README).
#
# Docker's default seccomp profile refuses io_uring_setup; m0serve then
# falls back to epoll on its own and says so on its start line. `docker
# stop` sends SIGTERM: m0serve stops accepting, finishes the requests in
# flight within --graceful-timeout (M0_GRACEFUL_TIMEOUT, 8 s here, under
# docker stop's 10 s before SIGKILL) and exits 0.

ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
RUN apt-get update \
	&& apt-get install -y --no-install-recommends make pkg-config python3-dev \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG COMMIT=unknown
RUN GOFLAGS=-trimpath make build BIN=/out/m0serve COMMIT=${COMMIT} \
	&& /out/m0serve --version

FROM ${RUNTIME_IMAGE}
RUN apt-get update \
	&& apt-get install -y --no-install-recommends python3 \
	&& rm -rf /var/lib/apt/lists/* \
	&& useradd --uid 10001 --user-group --home-dir /app --no-create-home --shell /usr/sbin/nologin m0serve
COPY --from=build /out/m0serve /usr/local/bin/m0serve
COPY examples/hello_wsgi.py /app/hello_wsgi.py
WORKDIR /app
USER 10001:10001
ENV M0_HOST=0.0.0.0 \
	M0_PORT=8000 \
	M0_GRACEFUL_TIMEOUT=8
EXPOSE 8000
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/m0serve"]
CMD ["hello_wsgi:app"]
