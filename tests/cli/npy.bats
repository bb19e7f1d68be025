#!/usr/bin/env bats
# .npy files as numpy and pandas write them: Fortran order, float32, integer,
# bool and string dtypes read without conversion by the user, and the arrays
# that cannot be read exactly refused with what to save instead.  Every file
# here is written by numpy itself (Debian's python3-numpy and python3-pandas,
# which scripts/deps.sh installs), and every expected value is computed by
# numpy from the same array, never by the tools.

load test_helper

PY=/usr/bin/python3

setup() {
    require_tools gpc-fit gpc-predict gpc-score gpc-scale
    common_setup
    set -o pipefail
    "$PY" -c 'import numpy, pandas' 2>/dev/null ||
        fail "$PY cannot import numpy and pandas: install python3-numpy python3-pandas (scripts/deps.sh does)"
}

# The header dict of a .npy file as numpy wrote it, without its padding
# (read by numpy's own magic-string reader, not by gpc).
npy_dict() {
    "$PY" -c 'import sys, numpy.lib.format as f
fh = open(sys.argv[1], "rb"); major, minor = f.read_magic(fh)
n = int.from_bytes(fh.read(2 if major == 1 else 4), "little")
print(fh.read(n).decode("latin1").strip())' "$1"
}

# ---- the acceptance case: a data frame's .values, float32, Fortran order ----------

# Crabs as pandas data frames: training and test inputs saved as
# np.asfortranarray(df.values.astype('float32')), labels as int64 0/1 (male =
# 1); beside them the same values as text, each float32 widened to a double
# and written with %.17g, and the labels as text.
crabs_frames() {
    "$PY" - "$REPO/data/crabs" <<'EOF'
import sys, numpy as np, pandas as pd
d = sys.argv[1]
cols = ["FL", "RW", "CL", "CW", "BD"]
for part, tag in (("train", ""), ("test", "t")):
    df = pd.read_csv(f"{d}/X-{part}.txt", sep=r"\s+", header=None, names=cols)
    df["male"] = (pd.read_csv(f"{d}/y-{part}.txt", header=None)[0] > 0).astype("int64")
    X = np.asfortranarray(df[cols].values.astype("float32"))
    assert X.flags.f_contiguous and not X.flags.c_contiguous
    np.save(f"X{tag}.npy", X)
    np.save(f"y{tag}.npy", df["male"].to_numpy())
    with open(f"X{tag}-f32.txt", "w") as f:
        for row in X.astype("float64"):
            f.write(" ".join("%.17g" % v for v in row) + "\n")
    with open(f"y{tag}-01.txt", "w") as f:
        f.write("".join("%d\n" % v for v in df["male"]))
EOF
}

@test "npy: a data frame's float32 Fortran .values and int64 labels fit, predict and score as the same text" {
    crabs_frames
    # numpy itself says the file is Fortran-ordered float32 and the labels int64
    run npy_dict X.npy
    assert_success
    assert_output "{'descr': '<f4', 'fortran_order': True, 'shape': (80, 5), }"
    run npy_dict y.npy
    assert_success
    assert_output "{'descr': '<i8', 'fortran_order': False, 'shape': (80,), }"
    run npy_dict Xt.npy
    assert_success
    assert_output "{'descr': '<f4', 'fortran_order': True, 'shape': (120, 5), }"
    # the float32 rounding shows in the text (FL 8.1 is 8.1000003814697266)
    [ "$(head -c 18 X-f32.txt)" = "8.1000003814697266" ] || fail "X-f32.txt: $(head -n 1 X-f32.txt)"

    gpc-fit -q X.npy y.npy | gpc-predict -m - Xt.npy | tee p-npy.txt | gpc-score - yt.npy > s-npy.txt
    gpc-fit -q X-f32.txt y-01.txt | gpc-predict -m - Xt-f32.txt | tee p-txt.txt |
        gpc-score - yt-01.txt > s-txt.txt
    assert_shape p-npy.txt 120 4
    assert_files_equal p-npy.txt p-txt.txt
    assert_files_equal s-npy.txt s-txt.txt
    # and the predictions are a classifier's: crabs' sex is easy
    read -r _ errors _ total _ < s-npy.txt
    [ "$total" -eq 120 ] && [ "$errors" -lt 12 ] || fail "score: $(cat s-npy.txt)"
}

@test "npy: the Fortran float32 file gives the model of the text, also from a pipe" {
    crabs_frames
    gpc-fit -q -m out/m-txt.txt X-f32.txt y-01.txt
    gpc-fit -q -m out/m-npy.txt X.npy y.npy
    cat X.npy | gpc-fit -q -m out/m-pipe.txt - y.npy
    assert_files_equal out/m-txt.txt out/m-npy.txt
    assert_files_equal out/m-txt.txt out/m-pipe.txt
}

# ---- every dtype, both orders, both byte orders -------------------------------------

@test "npy: every integer, float and bool dtype in C and Fortran order reads as numpy's own float values" {
    "$PY" - <<'EOF'
import numpy as np
ints = np.array([[-5, 1], [2, -3], [100, 7]])
kinds = {"f8": [[0.1, -2.5], [1e-3, 3], [65504, -7]], "f4": None, "f2": None,
         "i1": ints, "i2": ints, "i4": ints, "i8": ints,
         "u1": abs(ints), "u2": abs(ints), "u4": abs(ints), "u8": abs(ints),
         "b1": [[0, 1], [1, 1], [0, 0]]}
names = []
for kind, values in kinds.items():
    values = kinds["f8"] if values is None else values
    for order in ("<", ">"):
        dt = np.dtype(("|" if kind[1] == "1" else order) + kind)
        a = np.array(values).astype(dt)
        for layout, arr in (("C", np.ascontiguousarray(a)), ("F", np.asfortranarray(a))):
            name = f"{kind}{'be' if order == '>' else 'le'}{layout}"
            np.save(name + ".npy", arr)
            # the values the file holds, as numpy widens them to doubles
            with open(name + ".want", "w") as f:
                for row in a.astype("float64"):
                    f.write(" ".join("%.17g" % v for v in row) + "\n")
            names.append(name)
open("names.txt", "w").write("\n".join(names) + "\n")
EOF
    # 12 dtypes x 2 byte orders x 2 layouts
    [ "$(wc -l < names.txt)" -eq 48 ] || fail "$(wc -l < names.txt) files"
    # the headers say what was meant: big-endian int32 in Fortran order, bools
    run npy_dict i4beF.npy
    assert_success
    assert_output "{'descr': '>i4', 'fortran_order': True, 'shape': (3, 2), }"
    run npy_dict b1leC.npy
    assert_success
    assert_output "{'descr': '|b1', 'fortran_order': False, 'shape': (3, 2), }"
    # float16 rounds 0.1 to 0.0999755859375 (1638 x 2^-14): the text shows it
    [ "$(head -c 15 f2leC.want)" = "0.0999755859375" ] || fail "f2leC.want: $(head -n 1 f2leC.want)"
    while read -r name; do
        run gpc-scale -r id2.txt "$name.npy"
        assert_success
        assert_output "$(cat "$name.want")"
    done < names.txt
}

@test "npy: a Fortran 3 x 2 reads transposed from its file order" {
    "$PY" -c 'import numpy as np
a = np.array([[1, 4], [2, 5], [3, 6]], dtype="<i2", order="F")
np.save("f.npy", a)
assert a.tobytes(order="A") == np.arange(1, 7, dtype="<i2").tobytes()'
    run npy_dict f.npy
    assert_success
    assert_output "{'descr': '<i2', 'fortran_order': True, 'shape': (3, 2), }"
    run gpc-scale -r id2.txt f.npy
    assert_success
    assert_output "$(printf '1 4\n2 5\n3 6')"
}

# ---- refused ---------------------------------------------------------------------------

@test "npy: an int64 beyond 2^53 is refused naming its row, no output left" {
    "$PY" -c 'import numpy as np
np.save("big.npy", np.array([[1, 2], [3, 2**53], [2**53 + 1, 4]], dtype="<i8"))'
    run gpc-scale -r id2.txt -o out/x.txt big.npy
    assert_failure 3
    assert_output "gpc-scale: big.npy: row 3: integer 9007199254740993 is too large for a double to hold exactly (its magnitude is above 2^53 = 9007199254740992); scale the column down, or save arr.astype('<f8') to accept the rounding"
    assert_dir_empty out
    # as labels: the advice is strings
    "$PY" -c 'import numpy as np
np.save("ybig.npy", np.array([0, -2**53 - 1, 1], dtype=">i8"))'
    run gpc-fit -q -m out/m.txt X.txt ybig.npy
    assert_failure 3
    assert_output --partial "gpc-fit: ybig.npy: case 2: integer -9007199254740993 is too large"
    assert_output --partial "save the labels as strings, y.astype(str)"
    assert_dir_empty out
}

@test "npy: object, complex, string and structured arrays are refused saying what to save" {
    "$PY" - <<'EOF'
import numpy as np, pandas as pd
# a frame with a text column: its .values is an object array, which numpy pickles
df = pd.DataFrame({"x": [1.0, 2.0], "kind": ["a", "b"]})
np.save("obj.npy", df.values, allow_pickle=True)
np.save("cplx.npy", np.array([[1 + 2j, 3]]))
np.save("str.npy", np.array([["1", "2"], ["3", "4"]]))
np.save("rec.npy", df.to_records(index=False))
EOF
    run npy_dict obj.npy
    assert_success
    assert_output --partial "{'descr': '|O', "
    run gpc-scale -r id2.txt -o out/x.txt obj.npy
    assert_failure 3
    assert_output "gpc-scale: obj.npy: unsupported dtype '|O' (an object array: pickled Python objects, which gpc does not unpickle); save arr.astype('<f8')"
    run gpc-scale -r id2.txt -o out/x.txt cplx.npy
    assert_failure 3
    assert_output "gpc-scale: cplx.npy: unsupported dtype '<c16' (complex numbers); save arr.real.astype('<f8'), or the real and imaginary parts as two columns"
    run gpc-scale -r id2.txt -o out/x.txt str.npy
    assert_failure 3
    assert_output "gpc-scale: str.npy: unsupported dtype '<U1' (strings; a matrix holds numbers); save arr.astype('<f8') if the strings are numbers"
    run gpc-scale -r id2.txt -o out/x.txt rec.npy
    assert_failure 3
    assert_output --partial "gpc-scale: rec.npy: unsupported dtype: a structured array (named fields); save "
    assert_dir_empty out
    # what the messages say to save does read
    "$PY" -c 'import numpy as np
np.save("str2.npy", np.load("str.npy").astype("<f8"))
rec = np.load("rec.npy", allow_pickle=True)
np.save("rec2.npy", np.column_stack([rec[f] for f in ["x"]]).astype("<f8"))'
    run gpc-scale -r id2.txt str2.npy
    assert_success
    assert_output "$(printf '1 2\n3 4')"
    run gpc-scale -r <(printf '0\n1\n') rec2.npy
    assert_success
    assert_output "$(printf '1\n2')"
}

# ---- labels -----------------------------------------------------------------------------

# Iris from a data frame: the training inputs as float64 .values and the
# species as df['species'].to_numpy(dtype=str), a '<U10' array.
iris_frames() {
    iris_fixtures
    "$PY" - <<'EOF'
import numpy as np, pandas as pd
cols = ["species", "sl", "sw", "pl", "pw"]
df = pd.read_csv("iris.txt", sep=" ", header=None, names=cols).head(30)
np.save("X3.npy", df[cols[1:]].values)
np.save("y3.npy", df["species"].to_numpy(dtype=str))
EOF
}

@test "npy: species labels saved from pandas as '<U' strings fit the model the text labels do" {
    iris_frames
    run npy_dict y3.npy
    assert_success
    assert_output "{'descr': '<U10', 'fortran_order': False, 'shape': (30,), }"
    gpc-fit -q -O none -m out/m-txt.txt X3.txt y3.txt
    gpc-fit -q -O none -m out/m-npy.txt X3.npy y3.npy
    assert_files_equal out/m-txt.txt out/m-npy.txt
    [ "$(grep '^classes ' out/m-npy.txt)" = "classes setosa versicolor virginica" ] ||
        fail "$(grep '^classes' out/m-npy.txt)"
    # and as test labels for gpc-score, from a pipe
    "$PY" -c 'import numpy as np
np.save("yt3.npy", np.array(open("yt3.txt").read().split()))'
    gpc-predict -m out/m-npy.txt Xt3.txt > p.txt
    gpc-score -m out/m-npy.txt p.txt yt3.txt > s-txt.txt
    cat yt3.npy | gpc-score -m out/m-npy.txt p.txt - > s-npy.txt
    assert_files_equal s-txt.txt s-npy.txt
}

@test "npy: labels beyond ASCII are read as UTF-8, big-endian too" {
    iris_frames
    # the species renamed in Greek and with an accent, saved as '>U'
    "$PY" -c 'import numpy as np
names = {"setosa": "\u03c3\u03b5\u03c4\u03cc\u03c3\u03b1", "versicolor": "versicol\u00f3r",
         "virginica": "virginica"}
y = np.array([names[s] for s in open("y3.txt").read().split()])
np.save("yu.npy", y.astype(">U10"))
open("yu.txt", "w", encoding="utf-8").write("\n".join(y) + "\n")'
    run npy_dict yu.npy
    assert_success
    assert_output "{'descr': '>U10', 'fortran_order': False, 'shape': (30,), }"
    gpc-fit -q -O none -m out/m-txt.txt X3.txt yu.txt
    gpc-fit -q -O none -m out/m-npy.txt X3.txt yu.npy
    assert_files_equal out/m-txt.txt out/m-npy.txt
    grep -q '^classes versicolór virginica σετόσα$' out/m-npy.txt || fail "$(grep '^classes' out/m-npy.txt)"
}

@test "npy: bool and int8 labels are the classes 0 and 1 of the text labels" {
    gpc-fit -q -O none -m out/m-txt.txt Xz.txt y01.txt
    "$PY" -c 'import numpy as np
y = np.loadtxt("y01.txt")
np.save("yb.npy", y > 0)
np.save("yi.npy", y.astype("|i1"))'
    run npy_dict yb.npy
    assert_success
    assert_output "{'descr': '|b1', 'fortran_order': False, 'shape': (40,), }"
    for f in yb yi; do
        gpc-fit -q -O none -m out/m-$f.txt Xz.txt $f.npy
        assert_files_equal out/m-txt.txt out/m-$f.txt
    done
}

@test "npy: string labels that are not one word, and object labels, are refused naming the case" {
    "$PY" - <<'EOF'
import numpy as np
np.save("blank.npy", np.array(["yes", "no", "not sure", "yes"]))
np.save("empty.npy", np.array(["yes", "", "no", "yes"]))
np.save("obj.npy", np.array(["yes", "no", "no", "yes"], dtype=object), allow_pickle=True)
np.save("X4.npy", np.eye(4))
EOF
    run gpc-fit -q -O none -m out/m.txt X4.npy blank.npy
    assert_failure 3
    assert_output "gpc-fit: blank.npy: case 3: label 'not sure' has a blank; a label is one word: save np.char.replace(y, ' ', '_')"
    run gpc-fit -q -O none -m out/m.txt X4.npy empty.npy
    assert_failure 3
    assert_output "gpc-fit: empty.npy: case 2: an empty label: every case needs its label"
    run gpc-fit -q -O none -m out/m.txt X4.npy obj.npy
    assert_failure 3
    assert_output "gpc-fit: obj.npy: unsupported dtype '|O' (an object array: pickled Python objects, which gpc does not unpickle); save y.astype(str) for words or y.astype('<i8') for integers"
    assert_dir_empty out
    # the advice works
    "$PY" -c 'import numpy as np
np.save("fixed.npy", np.char.replace(np.load("blank.npy"), " ", "_"))'
    run gpc-fit -q -O none -m out/m.txt X4.npy fixed.npy
    assert_success
    grep -q '^classes no not_sure yes$' out/m.txt || fail "$(grep '^classes' out/m.txt)"
}
