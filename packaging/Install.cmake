# install() rules and the Debian package (CPack), included from the top-level CMakeLists.txt:
#   cmake --install build --prefix /opt/kvscope      # a tree: bin/, share/kvscope/, share/applications/
#   cmake --build build --target package             # build/packages/kvscope_<version>_<arch>.deb
# The layout is what core/model/ResourceDir.h looks for: PREFIX/bin/<program> finds its data in
# PREFIX/share/kvscope, so the tree works wherever it is unpacked. No RUNPATH is installed (every
# library comes from the system) and the .deb's binaries are stripped.

install(TARGETS kvscope kvscope-cli RUNTIME DESTINATION bin)
# Scenarios, hardware profiles, the example cluster file and sweep file.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/ DESTINATION share/kvscope)
# The gRPC schema and the Python reference client, with stubs generated from that schema
# (PYTHONPATH=PREFIX/share/kvscope/python PREFIX/share/kvscope/examples/router_client.py).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/backend/proto/kvscope DESTINATION share/kvscope/proto
        FILES_MATCHING PATTERN "*.proto")
install(PROGRAMS ${PROJECT_SOURCE_DIR}/examples/router_client.py DESTINATION share/kvscope/examples)
install(DIRECTORY ${PROJECT_BINARY_DIR}/python/kvscope DESTINATION share/kvscope/python
        FILES_MATCHING PATTERN "*_pb2.py" PATTERN "*_pb2_grpc.py" PATTERN "__pycache__" EXCLUDE)
# The desktop entry and its icon (freedesktop.org locations).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/kvscope.desktop DESTINATION share/applications)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/kvscope.svg DESTINATION share/icons/hicolor/scalable/apps)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME kvscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_DESCRIPTION
    "kvscope is a Qt console (and kvscope-cli its headless side) for KV-cache-aware routing on
prefill/decode-disaggregated LLM clusters (SGLang + Mooncake): a deterministic simulated cluster with
the routing policies, a gRPC backend, live cluster scraping and recordings.")
set(CPACK_PACKAGE_CONTACT "KVScope maintainers <kvscope-maintainers@localhost>")
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # kvscope_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Depends: dpkg-shlibdeps (dpkg-dev, installed by scripts/deps.sh) reads the libraries the two
# programs link (Qt 6 Widgets/Charts/OpenGL, gRPC, protobuf, yaml-cpp, spdlog/fmt, abseil, xxhash...)
# and names their Debian packages with versions; Qt's platform plugins ship in libqt6gui6, which is
# among them. The Python client's packages are only recommended.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3, python3-grpcio, python3-protobuf")
include(CPack)
