#include "cli.h"

int main(int argc, char **argv) { return nkicc::tool::run(argc, argv); }
