#!/usr/bin/env bash
# Backend READMEs are manuals, not histories: each stays within 12 KB (12 000 bytes);
# what was tried and measured before goes to the report folders.
# usage: readme_size_test.sh BACKENDS_DIR
set -u
dir=${1:?usage: readme_size_test.sh BACKENDS_DIR}
limit=12000 rc=0
for f in "$dir"/*/README.md; do
  n=$(wc -c < "$f")
  if ((n > limit)); then
    echo "$f: $n bytes, over $limit: move history to its report folders"
    rc=1
  fi
done
((rc == 0)) && echo "every backend README within $limit bytes"
exit $rc
