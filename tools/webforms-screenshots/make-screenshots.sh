#!/usr/bin/env bash
# Screenshots of XLSForms in ODK Web Forms, for docs/field-collection.md: the sample
# survey self- and device-randomized, and the two-group survey of the tests
# (tests/surveys/groups.toml) self-randomized, as a respondent of group 2 sees it.
# Needs: surveykit and pyxform (pip install -e ".[test]"), Node and npm, Debian's chromium.
# Writes docs/images/xlsform-self.png, xlsform-device.png and xlsform-groups.png.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
mkdir -p build
./node_modules/.bin/esbuild entry.js --bundle --format=esm --target=es2022 \
    --outfile=build/bundle.js --define:process.env.NODE_ENV='"production"' --log-level=warning

work="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server"; rm -rf "$work"' EXIT
db="sqlite:///$work/survey.db"
surveykit init --db "$db" >/dev/null
surveykit survey add "$repo/sample_data/academic_integrity.toml" --db "$db" >/dev/null
surveykit export xlsform --survey academic_integrity --out "$work/self.xlsx" --db "$db" >/dev/null
surveykit export xlsform --survey academic_integrity --out "$work/device.xlsx" --db "$db" \
    --randomize device --acknowledge-risk >/dev/null
surveykit survey add "$repo/tests/surveys/groups.toml" --db "$db" >/dev/null
surveykit export xlsform --survey groups --out "$work/groups.xlsx" --db "$db" >/dev/null
for form in self device groups; do
    python -c "import sys; from pyxform.xls2xform import xls2xform_convert; \
xls2xform_convert(sys.argv[1], sys.argv[2], validate=False)" "$work/$form.xlsx" "build/$form.xml"
done

port=8765
python -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1 &
server=$!
sleep 1
shoot() {  # form height [query]
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/chromium" --hide-scrollbars --window-size="900,$2" \
        --virtual-time-budget=8000 --screenshot="$repo/docs/images/xlsform-$1.png" \
        "http://127.0.0.1:$port/index.html?form=build/$1.xml${3:-}" >/dev/null 2>&1
}
shoot self 2150
shoot device 1620
shoot groups 2250 "&group=2"
echo "wrote $repo/docs/images/xlsform-self.png, xlsform-device.png and xlsform-groups.png"
