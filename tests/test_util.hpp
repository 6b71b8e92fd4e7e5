#pragma once
#include "clusterdyn/clusterdyn.hpp"
