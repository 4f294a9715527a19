#!/usr/bin/env bash
# What the test suite needs beyond pip: Debian's chromium + chromium-driver (the HTML
# report is tested in a real headless browser), postgresql (the results history runs on a
# throwaway cluster) and pdflatex with booktabs (the LaTeX
# fragment is compiled). Installed with apt-get when missing and we may (root, or
# passwordless sudo); otherwise a warning, and those tests skip saying why.
set -uo pipefail

need=()
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
# PostgreSQL for the results-history tests (a throwaway cluster: initdb + pg_ctl)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || command -v initdb >/dev/null 2>&1 \
    || need+=(postgresql)
if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
    need+=(texlive-latex-recommended)
fi
# pdftotext reads the compiled LaTeX tables back (tests/report/test_matrix.py, test_latex.py)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
[ ${#need[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "warning: no apt-get here; install ${need[*]} yourself or the browser/LaTeX tests skip" >&2
    exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
else
    echo "warning: not root and no passwordless sudo; install ${need[*]} yourself or the" \
         "browser/LaTeX tests skip" >&2
    exit 0
fi
echo "installing system packages for the tests: ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update -qq \
  && "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null \
  || echo "warning: apt-get could not install ${need[*]}; those tests will skip" >&2
exit 0
