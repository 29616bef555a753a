# Embeds a tree of text files in the binary as `const EmbeddedFile NAME[]` (path relative to
# ROOT, NUL-terminated content) and `const size_t NAME_COUNT`, so that files berth installs
# (the host plugins of integrations/) are kept and checked as real files in the tree. Run as a
# script at build time:
#   cmake -DROOT=dir -DFILES="a|b/c" -DOUTPUT=file.cc -DHEADER=dir/file.h -DNAMESPACE=berth::x
#         -DNAME=kFiles -P embed_files.cmake
# FILES separates paths with '|' (a ';' would split the -D argument). Bytes are written as hex,
# so that no content can end a string literal early.
string(REPLACE "|" ";" files "${FILES}")
list(SORT files)
set(body "")
set(table "")
set(index 0)
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
foreach(file IN LISTS files)
  file(READ "${ROOT}/${file}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
  string(APPEND body "const char kContent${index}[] = {\n    ${bytes}0x00};\n")
  string(APPEND table "    {\"${file}\", kContent${index}},\n")
  math(EXPR index "${index} + 1")
endforeach()
file(WRITE "${OUTPUT}.tmp"
     "// Generated from ${ROOT_NAME} by cmake/embed_files.cmake; edit those files instead.\n"
     "#include \"${HEADER}\"\n\n"
     "namespace ${NAMESPACE} {\n\n"
     "namespace {\n\n${body}\n}  // namespace\n\n"
     "const EmbeddedFile ${NAME}[] = {\n${table}};\n"
     "const size_t ${NAME}_COUNT = ${index};\n\n"
     "}  // namespace ${NAMESPACE}\n")
# Only a changed text rewrites the output, so that an unchanged one rebuilds nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
