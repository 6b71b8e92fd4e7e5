// The headers of the cluster layer's building blocks together, for cluster_builder.cpp (the one
// source left that includes them this way). Every other source includes the header of the source
// whose functions it calls: loop_constraints.hpp, loop_closure.hpp, cluster_kinematics.hpp (and
// step_modes.hpp for the modes).
#pragma once

#include "cluster/cluster_kinematics.hpp"
#include "cluster/loop_closure.hpp"
#include "cluster/loop_constraints.hpp"
