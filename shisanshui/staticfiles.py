"""Static files in production: WhiteNoise's compressed, hashed files, with the table page's ES
module imports (``import … from "./state.js"``) rewritten to the hashed names too, so a deploy
never mixes a new ``main.js`` with an old cached module."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True
