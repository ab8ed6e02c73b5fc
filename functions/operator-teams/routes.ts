import { addTeamMember, removeTeamMember } from './members';
import { listOperators } from './operators';
import { createTeam, deleteTeam, getTeam, listTeams, updateTeam } from './teams';

export const operatorTeamRoutes = [
  listTeams,
  createTeam,
  getTeam,
  updateTeam,
  deleteTeam,
  addTeamMember,
  removeTeamMember,
  listOperators,
];
