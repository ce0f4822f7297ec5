// main.cpp — the genroc binary; everything is in cli.cpp.
#include "cli.hpp"

int main(int argc, char **argv) { return genroc::genroc_main(argc, argv); }
