#include "all_headers.hpp"

int second_translation_unit() { return 0; }
