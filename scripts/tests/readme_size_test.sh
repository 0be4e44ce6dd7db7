#!/usr/bin/env bash
# READMEs are manuals, not histories: each backend README stays within 12 KB (12 000
# bytes) and the top README within 16 KB (16 384 bytes); what was tried and measured
# before goes to the report folders.
# usage: readme_size_test.sh BACKENDS_DIR [TOP_README]
set -u
dir=${1:?usage: readme_size_test.sh BACKENDS_DIR [TOP_README]}
rc=0
check() {
  local f=$1 limit=$2 n
  n=$(wc -c <"$f")
  if ((n > limit)); then
    echo "$f: $n bytes, over $limit: move history to the report folders"
    rc=1
  fi
}
for f in "$dir"/*/README.md; do check "$f" 12000; done
[[ -n ${2:-} ]] && check "$2" 16384
((rc == 0)) && echo "every backend README within 12000 bytes${2:+, the top README within 16384}"
exit $rc
