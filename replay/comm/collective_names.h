// The torch-free collective parsing, group planning and collective sequences
// live in core/comm/ (the predictors match collectives across ranks with
// them too); the replay names them as before it moved them there.
#pragma once

#include "core/comm/collective_sequence.h"
#include "core/comm/collective_spec.h"
#include "core/comm/group_plan.h"

namespace tracetwin::replay::comm {
using core::comm::chooseGroup;
using core::comm::Collective;
using core::comm::collectiveInfo;
using core::comm::CollectiveInfo;
using core::comm::collectives;
using core::comm::CollectiveSpec;
using core::comm::findCollective;
using core::comm::GroupChoice;
using core::comm::GroupLayout;
using core::comm::groupsToCreate;
using core::comm::knownCollectiveNames;
using core::comm::readCollective;
using core::comm::RecordedGroup;
using core::comm::resplitAllToAll;
using core::comm::Splits;
using core::comm::whyNotOneRank;
}  // namespace tracetwin::replay::comm

namespace tracetwin::replay::dist {
using core::comm::collectiveSequence;
using core::comm::CollectiveStep;
using core::comm::firstSequenceMismatch;
using core::comm::sequenceFromText;
using core::comm::sequenceToText;
}  // namespace tracetwin::replay::dist
