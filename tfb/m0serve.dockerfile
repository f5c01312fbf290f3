# The default test: the WSGI app (app_wsgi.py). FROM the image the
# repository's Dockerfile builds (docker build -t m0serve:0.4.0 . at the
# repository root); TechEmpower's run would name a published one.
ARG M0SERVE_IMAGE=m0serve:0.4.0
FROM ${M0SERVE_IMAGE}
COPY app_wsgi.py /app/
ENV M0_PORT=8080
EXPOSE 8080
CMD ["app_wsgi:app"]
