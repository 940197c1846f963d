# The hard inputs of bench/README.md, for bench_hard.sh and bench_perturb.sh: sourced
# with gen (corpus_gen), size, tar_size and work (a scratch folder) set; TAR_FILE as
# there. Defines input_names, input_args (a generated input's corpus_gen arguments after
# the size: seed, pattern) and make_input NAME FILE.
"$gen" random 20000 5 | tr -dc a-z > "$work/letters"
pattern64=$(head -c 64 "$work/letters")
pattern1031=$(tail -c 1031 "$work/letters")
declare -a input_names=(fibonacci thue-morse repeat-1000 repeat-100000 repeat-450000 edits runs
                        periodic-ab periodic-64 periodic-1031 text-x2 text-x4)
declare -A input_args=(
  [fibonacci]="fibonacci 1" [thue-morse]="thue-morse 1" [repeat-1000]="repeat 1 1000"
  [repeat-100000]="repeat 1 100000" [repeat-450000]="repeat 1 450000" [edits]="edits 1"
  [runs]="runs 1" [periodic-ab]="periodic 1 ab" [periodic-64]="periodic 1 $pattern64"
  [periodic-1031]="periodic 1 $pattern1031")
((tar_size > 0)) && input_names+=(tar)

make_input() {  # name file
  if [[ $1 == tar ]]; then
    if [[ -n ${TAR_FILE:-} ]]; then
      head -c "$tar_size" "$TAR_FILE" > "$2"
    else
      # tar stops on the closed pipe; what matters is the first TAR_SIZE bytes.
      { tar cf - /usr/include /usr/share 2>/dev/null || true; } | head -c "$tar_size" > "$2"
    fi
  elif [[ $1 == text-x* ]]; then
    # `cat f f` of a text file: one -9 block of whole copies, whatever SIZE is.
    local k=${1#text-x} i
    "$gen" text $((899980 / k)) 4 > "$work/chunk"
    for ((i = 0; i < k; i++)); do cat "$work/chunk"; done > "$2"
  else
    local -a a
    read -r -a a <<< "${input_args[$1]}"
    "$gen" "${a[0]}" "$size" "${a[@]:1}" > "$2"
  fi
}
