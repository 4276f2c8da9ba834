// A zoo model memorising one small batch on oneDNN: the losses of a few SGD
// steps on one fixed batch (10 classes), shared by the model families'
// learning tests.
#ifndef CNNBENCH_TESTS_MODELS_LEARN_BATCH_H_
#define CNNBENCH_TESTS_MODELS_LEARN_BATCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace cnnbench::models_test {

// Loss over `steps` SGD steps on one fixed batch of `batch` images of
// `image` px (empty, with a test failure, when a call fails).
std::vector<float> Losses(const std::string& model, int64_t batch, int64_t image,
                          Precision precision, int steps, double learning_rate);

// Whether the oneDNN backend runs bf16 on this CPU.
bool CpuRunsBf16();

// `model` memorising a batch of 4 at 32 px over 12 steps at learning rate
// 0.01, in fp32 and in bf16 where the CPU has it: a loss after the first
// below half of it (a test failure with the curve otherwise).
void ExpectLearnsABatch(const std::string& model);

}  // namespace cnnbench::models_test

#endif  // CNNBENCH_TESTS_MODELS_LEARN_BATCH_H_
