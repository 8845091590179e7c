"""Static files storage."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Hashed, compressed names once ``collectstatic`` has written its manifest
    (``make run``, the Docker image); plain names before that, or for a file
    added since the last ``collectstatic``, so a checkout (the test suite, a
    developer's shell) renders pages instead of failing on a missing manifest
    entry. Production always collects first, so it always gets hashed names."""

    def stored_name(self, name):
        if not self.hashed_files:
            return name
        try:
            return super().stored_name(name)
        except ValueError:
            return name
