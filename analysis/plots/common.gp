# common.gp — shared look of the tidesim charts (loaded by every chart script).
# Variables set by `tidesim plot`: data, out, term, subtitle.
eval "set terminal ".term
set output out
set key outside right top box opaque
set grid back lc rgb '#dddddd'
set border 3
set tics nomirror
set datafile missing "NaN"
