# cmake -DIN=file -DOUT=header.h -DNAME=symbol -P EmbedText.cmake: the file as a C array
# `static const char NAME[]` with a terminating NUL (the HTML report embeds its page script so).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUT}" "/* generated from ${IN} by cmake/EmbedText.cmake: do not edit */\nstatic const char ${NAME}[] = {${bytes}0};\n")
