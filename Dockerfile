# Casebook image: the web server, the Celery worker and beat all run from it.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    CASEBOOK_DATA_DIR=/data

# gettext: compilemessages; curl: the container healthcheck.
RUN apt-get update \
    && apt-get install -y --no-install-recommends gettext curl \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY requirements.txt requirements-ldap.txt ./
# python-ldap (directory sign-in, requirements-ldap.txt) is compiled against
# libldap/libsasl: the build packages are removed afterwards, the shared
# libraries the compiled modules link to are kept (marked manual by ldd).
RUN apt-get update \
    && saved="$(apt-mark showmanual)" \
    && apt-get install -y --no-install-recommends gcc libc6-dev libldap2-dev libsasl2-dev \
    && pip install -r requirements.txt -r requirements-ldap.txt \
    && apt-mark auto '.*' >/dev/null && apt-mark manual $saved >/dev/null \
    && find /usr/local -type f -name '*.so' -exec ldd '{}' ';' \
        | awk '/=>/ { so = $(NF-1); if (index(so, "/usr/local/") == 1) next; gsub("^/(usr/)?", "", so); print so }' \
        | sort -u | xargs -r dpkg-query --search | cut -d: -f1 | sort -u | xargs -r apt-mark manual \
    && apt-get purge -y --auto-remove -o APT::AutoRemove::RecommendsImportant=false \
    && rm -rf /var/lib/apt/lists/* \
    && python -c "import ldap, django_auth_ldap"

COPY . .

# Static files and catalogues are built into the image (outside the /data
# volume, so a new image brings new static files). A throwaway key keeps the
# build from writing a secret key into an image layer.
ENV CASEBOOK_STATIC_ROOT=/srv/static
RUN SECRET_KEY=image-build-only CASEBOOK_DATA_DIR=/tmp/build-data sh -c '\
        python manage.py compilemessages --ignore=.venv --ignore=data -v0 \
        && python manage.py collectstatic --noinput -v0' \
    && rm -rf /tmp/build-data \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin casebook \
    && mkdir -p /data/uploads /data/tmp \
    && chown -R casebook:casebook /data

USER casebook
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8000/healthz || exit 1

CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--threads", "4", "--timeout", "120", "--access-logfile", "-", "--no-control-socket"]
