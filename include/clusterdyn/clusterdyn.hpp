// Umbrella header of the clusterdyn C++ API.
#pragma once

#include "clusterdyn/aba.hpp"
#include "clusterdyn/configuration.hpp"
#include "clusterdyn/crba.hpp"
#include "clusterdyn/data.hpp"
#include "clusterdyn/energy.hpp"
#include "clusterdyn/jacobian.hpp"
#include "clusterdyn/kinematics.hpp"
#include "clusterdyn/model.hpp"
#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/model_info.hpp"
#include "clusterdyn/rnea.hpp"
#include "clusterdyn/urdf.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/logging.hpp"
