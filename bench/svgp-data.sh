#!/bin/sh
# The synthetic binary data of the sparse benchmarks, once into DIR: n cases
# of 8 inputs uniform on [-1, 1] (labels from sin(3 a) + b c + d/2 - e^2/2
# with a little noise; awk's generator, seed 3) as DIR/Xn.txt and yn.txt,
# and as .npy files of doubles, DIR/Xn.npy and yn.npy.
#
#   bench/svgp-data.sh DIR n...
set -eu
dir=$1
shift
mkdir -p "$dir"
printf '0 0 0 0 0 0 0 0\n1 1 1 1 1 1 1 1\n' > "$dir/id8.txt"
printf '0\n1\n' > "$dir/id1.txt"
for n in "$@"; do
    [ -s "$dir/X$n.npy" ] && [ -s "$dir/X$n.txt" ] && continue
    awk -v n="$n" -v out="$dir" 'BEGIN { srand(3)
        for (i = 0; i < n; i++) {
            line = ""
            for (j = 1; j <= 8; j++) { x[j] = 2 * rand() - 1; line = line (j > 1 ? " " : "") sprintf("%.6f", x[j]) }
            f = sin(3 * x[1]) + x[2] * x[3] + 0.5 * x[4] - 0.5 * x[5] * x[5] + 0.3 * (rand() - 0.5)
            print line > (out "/X" n ".txt")
            print (f > 0 ? 1 : 0) > (out "/y" n ".txt") } }'
    bin/gpc-scale -r "$dir/id8.txt" -F npy -o "$dir/X$n.npy" "$dir/X$n.txt"
    bin/gpc-scale -r "$dir/id1.txt" -F npy -o "$dir/y$n.npy" "$dir/y$n.txt"
done
