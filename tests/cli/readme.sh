# The README's first command, from its build steps on, run in a copy of the source tree
# that holds this build's programs: it must succeed and leave nothing outside build/,
# which .gitignore covers (it left a 20 MB sample and sample.bz2 in the source tree).
source "$(dirname "$0")/common.bash" "$@"

cmd=$(awk '/^```sh$/ { getline; print; exit }' "$SRC/README.md")
built='cmake --build build -j"$(nproc)" && '
[[ $cmd == *"$built"* ]] || { fail "the README's first command has no [$built]: [$cmd]"; finish; }
mkdir -p tree/build/cli tree/build/corpus
ln -s "$GP" tree/build/cli/gpbzip2
ln -s "$GEN" tree/build/corpus/corpus_gen
cp "$SRC/.gitignore" tree/
(cd tree && eval "${cmd#*"$built"}") >readme.out 2>readme.err
expect_eq "$?" 0 "the README's first command: exit code ($(cat readme.err))"
expect_eq "$(tail -1 readme.out)" "sample: identical to bzip2 -9, round trip OK" "the README's first command: result"
expect_eq "$(cd tree && find . -mindepth 1 -maxdepth 1 ! -name build ! -name .gitignore)" "" \
  "the README's first command writes only under build/"
if command -v git >/dev/null; then
  (cd tree && git init -q . && git add .gitignore)
  expect_eq "$(cd tree && git status --porcelain --untracked-files=all | grep -v '^A  .gitignore$')" "" \
    "git sees nothing the README's first command left"
fi

finish
