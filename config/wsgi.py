import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Upload temp files a killed server left behind (kill -9, OOM): the files of
# the requests this process will serve do not exist yet, and another
# worker's are held open, so nothing in use is removed.
from triage.uploads import cleanup_temp_files  # noqa: E402 - needs the configured apps

cleanup_temp_files(older_than=0)
