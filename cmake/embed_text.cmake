# Embeds a text file in the binary as a NUL-terminated `const char NAME[]`, so that a file
# berth writes out at run time (such as the Node preload) is kept and checked as a real file
# in the tree. Run as a script at build time:
#   cmake -DINPUT=file -DOUTPUT=file.cc -DHEADER=dir/file.h -DNAMESPACE=berth::x -DNAME=kText
#         -P embed_text.cmake
# The bytes are written as hex, so that no content can end a string literal early.
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# 16 bytes per line keeps the generated file readable (CMake regexes have no {16}).
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
get_filename_component(input_name "${INPUT}" NAME)
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${input_name} by cmake/embed_text.cmake; edit ${input_name} instead.\n"
     "#include \"${HEADER}\"\n\n"
     "namespace ${NAMESPACE} {\n\n"
     "const char ${NAME}[] = {\n    ${bytes}0x00};\n\n"
     "}  // namespace ${NAMESPACE}\n")
# Only a changed text rewrites the output, so that an unchanged one rebuilds nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
