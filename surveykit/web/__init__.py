"""Web collection: ``surveykit serve`` and the page whose script draws each respondent's rules.

* :mod:`surveykit.web.assets`: the page, its script and style (shipped in
  ``templates/web/``) and their published SHA-256 hashes;
* :mod:`surveykit.web.security`: headers, CSRF, rate limits, strict JSON bodies;
* :mod:`surveykit.web.app`: the ASGI application (Starlette);
* :mod:`surveykit.web.server`: running it on uvicorn with a live count.

Importing this package needs the ``web`` extra (starlette, uvicorn) only
for :mod:`surveykit.web.app` and :mod:`surveykit.web.server`.
"""
