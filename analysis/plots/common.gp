# common.gp — shared look of the tidesim charts (loaded by every chart script).
# Variables set by `tidesim plot`: data, out, term, subtitle.
# Text is never enhanced: a '_' or '^' in a name is a character, not markup.
eval "set terminal ".term
set termoption noenhanced
set output out
set key outside right top box opaque
set grid back lc rgb '#dddddd'
set border 3
set tics nomirror
set datafile missing "NaN"
# Paul Tol's bright qualitative scheme (colour-blind safe), then two more.
palette = "#4477aa #ee6677 #228833 #ccbb44 #66ccee #aa3377 #bbbbbb #000000"
col(i) = word(palette, (i - 1) % 8 + 1)
