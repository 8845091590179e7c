import json

from config.storage import StaticFilesStorage


def test_plain_names_before_collectstatic(tmp_path):
    storage = StaticFilesStorage(location=str(tmp_path))
    assert storage.url("css/casebook.css") == "/static/css/casebook.css"


def test_hashed_names_from_the_manifest_and_plain_names_for_new_files(tmp_path):
    manifest = {"paths": {"css/casebook.css": "css/casebook.532a0cd4149b.css"}, "version": "1.1", "hash": "x"}
    (tmp_path / "staticfiles.json").write_text(json.dumps(manifest))
    storage = StaticFilesStorage(location=str(tmp_path))
    assert storage.url("css/casebook.css") == "/static/css/casebook.532a0cd4149b.css"
    # Added to static/ after the last collectstatic: still renders.
    assert storage.url("js/added-later.js") == "/static/js/added-later.js"
