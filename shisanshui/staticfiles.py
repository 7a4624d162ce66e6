"""Static files in production: WhiteNoise's compressed, hashed files, with the table page's ES
module imports (``import … from "./state.js"``) rewritten to the hashed names too, so a deploy
never mixes a new ``main.js`` with an old cached module."""

from __future__ import annotations

from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticFilesStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True
    # Each pass gives one more level of imports its hashed names; the table page's modules
    # import each other up to seven deep (main.js … views/arrange.js, state.js,
    # state/handtypes.js, state/layout.js, state/cardorder.js). Django's default is 5.
    max_post_process_passes = 12
