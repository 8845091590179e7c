# Casebook: `make run` serves the app, `make test` runs the whole suite.
# Needs only python3 (>= 3.11); everything else goes into .venv.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
WEB_WORKERS ?= 2
PYTEST_ARGS ?=
# One pytest process per core, plus one: about a third of the suite's time is
# spent waiting on real processes (servers starting, leases expiring, Chromium),
# which the extra process fills with other tests. A test file stays on one
# process (its module fixtures, network namespaces and worker processes are set
# up once); the longest files go first (tests/durations.json).
TEST_PROCESSES ?= $(shell $(PYTHON) -c 'import os; print(len(os.sched_getaffinity(0)) + 1)')
PYTEST_XDIST ?= -n $(TEST_PROCESSES) --dist loadfile

# Stamps named after the requirements' hash: re-running is instant, changing a
# pin reinstalls.
REQ_HASH := $(shell cat requirements.txt | $(PYTHON) -c "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])")
DEV_HASH := $(shell cat requirements.txt requirements-dev.txt | $(PYTHON) -c "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])")
LDAP_HASH := $(shell cat requirements-ldap.txt | $(PYTHON) -c "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16])")
RUN_STAMP := $(VENV)/.installed-run-$(REQ_HASH)
DEV_STAMP := $(VENV)/.installed-dev-$(DEV_HASH)
LDAP_STAMP := $(VENV)/.installed-ldap-$(LDAP_HASH)

.PHONY: help install install-dev install-ldap run prepare test lint format messages worker beat clean

help:
	@echo "make run      create .venv, install, migrate, load cases, create admin, serve on http://$(HOST):$(PORT)/"
	@echo "make test     install test dependencies and run the whole suite (pytest)"
	@echo "make install-ldap  add the optional directory sign-in packages (needs gcc, libldap2-dev, libsasl2-dev)"
	@echo "make lint     ruff check + ruff format --check + mypy + import-linter (the layers) + radon (no D or worse, average under the ceiling: tools/radon-baseline.txt)"
	@echo "make format   ruff format + ruff check --fix"
	@echo "make messages extract UI strings into locale/zh_Hans and compile them"
	@echo "make worker   run a Celery worker (needs REDIS_URL)"
	@echo "make beat     run Celery beat (needs REDIS_URL)"

$(PY):
	$(PYTHON) -c 'import sys; sys.exit("Casebook needs Python >= 3.11") if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): requirements.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	rm -f $(VENV)/.installed-run-*
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	rm -f $(VENV)/.installed-dev-*
	touch $@

# Directory sign-in (python-ldap, django-auth-ldap): optional, since python-ldap is
# compiled (gcc, libldap2-dev, libsasl2-dev). Without it the LDAP tests skip (fail in CI).
$(LDAP_STAMP): requirements-ldap.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-ldap.txt
	rm -f $(VENV)/.installed-ldap-*
	touch $@

install: $(RUN_STAMP)

install-ldap: $(LDAP_STAMP)

install-dev: $(DEV_STAMP)

# Everything `run` does before serving; also what the Docker entrypoint does.
prepare: install
	$(PY) manage.py migrate --noinput
	@# The compiled catalogues are committed, so a machine without gettext still has them.
	@if command -v msgfmt >/dev/null 2>&1; then \
		$(PY) manage.py compilemessages --ignore=$(VENV) --ignore=data -v0; \
	else \
		echo "msgfmt not found: using the committed locale/*/LC_MESSAGES/django.mo"; \
	fi
	$(PY) manage.py collectstatic --noinput -v0
	$(PY) manage.py loadcases
	$(PY) manage.py ensure_admin

run: prepare
	@echo ""
	@echo "Casebook is serving on http://$(HOST):$(PORT)/"
	@echo "Log in as 'admin' (password printed above on the first run, or CASEBOOK_ADMIN_PASSWORD)."
	@echo "Tasks run $$( [ -n "$$REDIS_URL" ] && echo "on the Celery workers of $$REDIS_URL" || echo "in-process (REDIS_URL unset)")."
	@echo ""
	$(VENV)/bin/gunicorn config.wsgi --bind $(HOST):$(PORT) --workers $(WEB_WORKERS) --threads 4 \
		--timeout 120 --access-logfile - --no-control-socket

# pytest exit code 5 means "no tests collected": a failure, never a silent pass.
test: install-dev
	@mkdir -p test-output
	@set +e; $(VENV)/bin/pytest $(PYTEST_XDIST) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: treating that as a failure" >&2; fi; \
	exit $$rc

lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	@# no function rated D or worse by radon beyond tools/radon-baseline.txt (it only shrinks), average complexity under its ceiling (it only falls)
	$(PY) tools/radon_gate.py

format: install-dev
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

messages: install
	$(PY) manage.py makemessages -l zh_Hans --ignore=$(VENV) --ignore=data --ignore=tests --no-obsolete
	$(PY) manage.py compilemessages -l zh_Hans --ignore=$(VENV) --ignore=data

# One worker for both queues: analyses and the beat tasks (heartbeat, sweeper;
# docker-compose.yml gives those their own worker).
worker: install
	$(VENV)/bin/celery -A config worker -l info -Q $${CASEBOOK_QUEUE:-celery},$${CASEBOOK_BEAT_QUEUE:-casebook-beat}

beat: install
	$(VENV)/bin/celery -A config beat -l info --schedule $${CASEBOOK_DATA_DIR:-data}/celerybeat-schedule

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache test-output
