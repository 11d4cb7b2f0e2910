import { gitWorktrees } from '../../adapters/git/worktrees.ts';
import { worktreesContract } from '../contracts/worktrees.contract.ts';

worktreesContract('git', (root) => gitWorktrees({ root }), (root) => gitWorktrees({ root, binary: '/nonexistent/git' }));
