# --progress. Where stderr is no terminal (a log), one whole line per update and at most
# one a second; on a terminal, one line redrawn in place. Both ways it shows the share of
# the input read and both speeds, so compressing shows in > out and decompressing out > in.
source "$(dirname "$0")/common.bash" "$@"

gen text 3000000 1 >text
bzip2 -9 <text >text.bz2
cp text.bz2 copy.bz2

# check_lines FILE NAME WHAT: FILE holds progress lines for NAME and nothing else.
check_lines() {
  [[ -s $1 ]] || fail "$3: no progress line"
  grep -q $'\r' "$1" && fail "$3: carriage returns in a log: $(cat -A "$1")"
  [[ -z $(tail -c1 "$1") ]] || fail "$3: the last line is not ended"
  local re="^  $2: +[0-9]+\\.[0-9]%, in [0-9]+\\.[0-9] MB/s, out [0-9]+\\.[0-9] MB/s, [0-9]+:[0-9]{2} left\$"
  grep -Evq "$re" "$1" && fail "$3: not a progress line: $(grep -Ev "$re" "$1")"
}
# speeds FILE: "in out" of the first line
speeds() { sed -E -n '1s/.*, in ([0-9.]+) MB\/s, out ([0-9.]+) MB\/s.*/\1 \2/p' "$1"; }

"$GP" --progress -c text 2>c.err >/dev/null
check_lines c.err text "compressing"
read -r in out < <(speeds c.err)
awk -v i="$in" -v o="$out" 'BEGIN { exit !(i > o) }' || fail "compressing: in $in MB/s, out $out MB/s"

"$GP" --progress -dc copy.bz2 2>d.err >/dev/null
check_lines d.err copy.bz2 "decompressing"
read -r in out < <(speeds d.err)
awk -v i="$in" -v o="$out" 'BEGIN { exit !(o > i) }' || fail "decompressing: in $in MB/s, out $out MB/s"

# From a pipe the size is unknown: the bytes read instead of a share. Input that stalls
# for 1.5 s gives a line before and one after, and never more than one a second.
start=$(date +%s%N)
{ gen text 300000 1; sleep 1.5; gen text 300000 2; } | "$GP" -1 --progress 2>p.err >/dev/null
ms=$((($(date +%s%N) - start) / 1000000))
re='^  \(stdin\): [0-9]+\.[0-9] MB read, in [0-9]+\.[0-9] MB/s, out [0-9]+\.[0-9] MB/s$'
grep -Evq "$re" p.err && fail "pipe: not a progress line: $(cat -A p.err)"
lines=$(wc -l <p.err)
((lines >= 2)) || fail "pipe: $lines line(s) around a 1.5 s stall"
((lines <= 1 + ms / 1000)) || fail "pipe: $lines lines in $ms ms"

# With -v the first line ends the file's open line, the next start as it does, and the
# result comes on a line of its own.
cp text a
"$GP" -v --progress -1 a 2>v.err
[[ $(head -1 v.err) =~ ^"  a: "\ +[0-9]+\.[0-9]%,\ in ]] || fail "-v: first line: $(cat -A v.err)"
[[ $(tail -1 v.err) =~ ^"  a: "\ +[0-9.]+:1,\ .*\ saved,\ 3000000\ in,\ [0-9]+\ out\.$ ]] ||
  fail "-v: last line: $(cat -A v.err)"
expect_eq "$(grep -vc '^  a: ' v.err)" 0 "-v: every line starts with the file's name"

# Without --progress a log gets nothing.
"$GP" -c text 2>n.err >/dev/null
expect_eq "$(wc -c <n.err)" 0 "no progress into a file without --progress"

# On a terminal (script(1) gives one): carriage returns, and the line wiped at the end.
if command -v script >/dev/null; then
  script -qec "'$GP' --progress -c text >/dev/null" /dev/null >t.out
  grep -Eq $'^\r  text: +[0-9]+\\.[0-9]%, in ' t.out || fail "terminal: no redrawn line: $(cat -A t.out)"
  [[ $(tail -c1 t.out) == $'\r' ]] || fail "terminal: the line is not wiped: $(cat -A t.out)"
fi

finish
