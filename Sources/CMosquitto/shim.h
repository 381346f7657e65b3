#pragma once
#if __has_feature(modules)
#pragma clang module import SwiftGlibc
#endif
#include <mosquitto.h>
