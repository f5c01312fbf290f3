#!/bin/sh
# nginx terminating TLS in front of m0serve in the clear, over a Unix
# socket: the deployment --ssl-* replaces (make bench-tls). Usage:
#   nginx-front.sh PORT M0SERVE-ARGS...
# Both run in this process group; the harness counts the CPU of the
# pair (nginx and its worker, and m0serve, its descendants).
set -e
port=$1
shift
dir=$(mktemp -d /tmp/m0serve-nginx-front.XXXXXX)
sock=$dir/m0serve.sock
bin/m0serve --uds "$sock" "$@" &
cat > "$dir/nginx.conf" <<CONF
daemon off;
master_process on;
worker_processes 1;
user root;
pid $dir/nginx.pid;
error_log stderr error;
events { worker_connections 1024; }
http {
    access_log off;
    upstream m0serve { server unix:$sock; keepalive 64; }
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate $PWD/bench/tls/cert.pem;
        ssl_certificate_key $PWD/bench/tls/key.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        keepalive_requests 1000000;
        location / {
            proxy_pass http://m0serve;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
        }
    }
}
CONF
# Wait for the socket, so nginx's first request finds m0serve.
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
exec nginx -c "$dir/nginx.conf"
