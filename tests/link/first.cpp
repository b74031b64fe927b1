#include "all_headers.hpp"

int second_translation_unit();

int main() { return second_translation_unit(); }
