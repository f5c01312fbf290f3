# The asgi test: the ASGI app (app_asgi.py), from the same image as
# m0serve.dockerfile.
ARG M0SERVE_IMAGE=m0serve:0.4.0
FROM ${M0SERVE_IMAGE}
COPY app_asgi.py /app/
ENV M0_PORT=8080
EXPOSE 8080
CMD ["app_asgi:app"]
