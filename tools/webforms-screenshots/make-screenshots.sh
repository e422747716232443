#!/usr/bin/env bash
# Screenshots of the sample survey's XLSForms in ODK Web Forms, for docs/field-collection.md.
# Needs: surveykit and pyxform (pip install -e ".[test]"), Node and npm, Debian's chromium.
# Writes docs/images/xlsform-self.png and docs/images/xlsform-device.png.
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
for form in self device; do
    python -c "import sys; from pyxform.xls2xform import xls2xform_convert; \
xls2xform_convert(sys.argv[1], sys.argv[2], validate=False)" "$work/$form.xlsx" "build/$form.xml"
done

port=8765
python -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1 &
server=$!
sleep 1
shoot() {  # form height
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$work/chromium" --hide-scrollbars --window-size="900,$2" \
        --virtual-time-budget=8000 --screenshot="$repo/docs/images/xlsform-$1.png" \
        "http://127.0.0.1:$port/index.html?form=build/$1.xml" >/dev/null 2>&1
}
shoot self 2150
shoot device 1620
echo "wrote $repo/docs/images/xlsform-self.png and xlsform-device.png"
