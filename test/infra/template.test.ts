/**
 * The checks of the synthesized service stack, in one process: each check file reads the same
 * synthesis of the default stack (test/infra/synth.ts), which CDK takes seconds to build and which
 * a file of its own would build again. Variants (other props) are synthesized where a check needs them.
 */
import './stack.checks';
import './guard-rails.checks';
import './iam-needs.checks';
import './nag.checks';
import './operations.checks';
import './tenant-insights.checks';
import './cfn-lint.checks';
